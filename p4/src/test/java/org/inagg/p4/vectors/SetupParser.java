package org.inagg.p4.vectors;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.inagg.p4.control.JobSpec;
import org.inagg.p4.control.JobTable;
import org.inagg.p4.control.SwitchAddress;
import org.inagg.p4.control.WorkerEndpoint;

/**
 * Reads a vector's simple_switch_CLI setup back into the control plane's {@link JobTable}: job rows, worker sources,
 * worker endpoints and multicast nodes (whose port is the worker's). Peers are numbered by the frame transport.
 */
final class SetupParser
{
    private record JobRow(int jobId, int workers, int slots, int base, int lanes, int group)
    {
    }

    private record Endpoint(long mac, int ipv4, int udpPort)
    {
    }

    private SetupParser()
    {
    }

    static SwitchAddress switchAddress(final List<String> setup)
    {
        for (final String line : setup)
        {
            final String[] w = line.split("\\s+");
            if (w[0].equals("table_set_default") && w[1].equals("InaggEgress.switch_address"))
            {
                return new SwitchAddress(WorkerEndpoint.parseMac(w[3]), WorkerEndpoint.parseIpv4(w[4]));
            }
        }
        throw new IllegalArgumentException("no switch address in the setup");
    }

    static JobTable jobTable(final List<String> setup, final FrameTransport transport)
    {
        final Map<Integer, JobRow> rows = new LinkedHashMap<>();
        final Map<String, int[]> sources = new HashMap<>();
        final Map<String, Endpoint> endpoints = new HashMap<>();
        final List<int[]> nodes = new ArrayList<>();
        final Map<String, Integer> portOfGroupRid = new HashMap<>();
        for (final String line : setup)
        {
            final String[] w = line.split("\\s+");
            switch (w[0])
            {
                case "table_add" ->
                {
                    switch (w[1])
                    {
                        case "InaggIngress.job_table" -> rows.put(Integer.parseInt(w[3]), new JobRow(
                            Integer.parseInt(w[3]), Integer.parseInt(w[5]), Integer.parseInt(w[6]),
                            Integer.parseInt(w[7]), Integer.parseInt(w[8]), Integer.parseInt(w[9])));
                        case "InaggIngress.worker_source" -> sources.put(w[3] + "/" + w[4],
                            new int[]{WorkerEndpoint.parseIpv4(w[5]), Integer.parseInt(w[6])});
                        case "InaggEgress.worker_endpoint" -> endpoints.put(w[3] + "/" + w[4], new Endpoint(
                            WorkerEndpoint.parseMac(w[6]), WorkerEndpoint.parseIpv4(w[7]), Integer.parseInt(w[8])));
                        default -> throw new IllegalArgumentException("unknown table in setup: " + line);
                    }
                }
                case "mc_node_create" -> nodes.add(new int[]{Integer.parseInt(w[1]), Integer.parseInt(w[2])});
                case "mc_node_associate" ->
                {
                    final int[] node = nodes.get(Integer.parseInt(w[2]));
                    portOfGroupRid.put(w[1] + "/" + node[0], node[1]);
                }
                case "register_reset", "table_set_default", "mc_mgrp_create" ->
                {
                }
                default -> throw new IllegalArgumentException("unknown setup command: " + line);
            }
        }
        final JobTable table = new JobTable(switchAddress(setup));
        for (final JobRow row : rows.values())
        {
            final List<WorkerEndpoint> workers = new ArrayList<>();
            for (int worker = 0; worker < row.workers(); worker++)
            {
                final String key = row.jobId() + "/" + worker;
                final Endpoint endpoint = endpoints.get(key);
                final int[] source = sources.get(key);
                final Integer port = portOfGroupRid.get(row.group() + "/" + worker);
                if (endpoint == null || source == null || port == null)
                {
                    throw new IllegalArgumentException("job " + row.jobId() + " worker " + worker
                        + " lacks a source, an endpoint or a multicast node");
                }
                if (source[0] != endpoint.ipv4() || source[1] != endpoint.udpPort())
                {
                    throw new IllegalArgumentException("job " + row.jobId() + " worker " + worker
                        + ": registered source differs from its endpoint");
                }
                final int peer = transport.peer(endpoint.ipv4(), endpoint.udpPort(), port, endpoint.mac());
                workers.add(new WorkerEndpoint(peer, port, endpoint.mac(), endpoint.ipv4(), endpoint.udpPort()));
            }
            table.add(new JobSpec(row.jobId(), row.slots(), row.base(), row.lanes(), row.group(), workers));
        }
        return table;
    }
}
