package org.inagg.p4.vectors;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.inagg.p4.control.EsaJobSpec;
import org.inagg.p4.control.EsaPool;
import org.inagg.p4.control.JobSpec;
import org.inagg.p4.control.JobTable;
import org.inagg.p4.control.SwitchAddress;
import org.inagg.p4.control.WorkerEndpoint;
import org.inagg.p4.esa.AllocationMode;
import org.inagg.p4.esa.PriorityPolicy;

/**
 * Reads a vector's simple_switch_CLI setup back into the control plane's {@link JobTable}: job rows (slot protocol or
 * ESA), worker and server sources, worker and server endpoints and multicast nodes (whose port is the worker's).
 * Peers are numbered by the frame transport. ESA rows also give the pool (first copy, mask, mode, priority policy),
 * which every row must agree on; the round trip through {@link JobTable#simpleSwitchCommands()} checks the rest.
 */
final class SetupParser
{
    private record JobRow(int jobId, int workers, int slots, int base, int lanes, int group, int session)
    {
    }

    /** A set_upstream_job row: the bitmap words are unsigned 32-bit decimals; the session comes last. */
    private record UpstreamRow(int jobId, int workers, int slots, int base, int lanes, int contributors, int serverPort,
        int[] words, int session)
    {
        static UpstreamRow parse(final String[] w)
        {
            final int[] words = new int[w.length - 12];
            for (int i = 0; i < words.length; i++)
            {
                words[i] = (int)Long.parseLong(w[11 + i]);
            }
            return new UpstreamRow(Integer.parseInt(w[3]), Integer.parseInt(w[5]), Integer.parseInt(w[6]),
                Integer.parseInt(w[7]), Integer.parseInt(w[8]), Integer.parseInt(w[9]), Integer.parseInt(w[10]), words,
                Integer.parseInt(w[w.length - 1]));
        }

        int[] localWorkers()
        {
            final List<Integer> local = new ArrayList<>();
            for (int worker = 0; worker < 32 * words.length; worker++)
            {
                if ((words[worker >>> 5] >>> (worker & 31) & 1) != 0)
                {
                    local.add(worker);
                }
            }
            return local.stream().mapToInt(Integer::intValue).toArray();
        }
    }

    private record EsaRow(int jobId, int workers, int window, int lanes, int group, int flushGroup, int mode,
        int firstCopy, int mask, int priorityFromHeader, int priority, int serverPort)
    {
        EsaPool pool()
        {
            return new EsaPool(firstCopy / 2, mask + 1,
                mode == 1 ? AllocationMode.PREEMPTIVE : AllocationMode.DEALLOCATE_ON_ACK,
                priorityFromHeader == 1 ? PriorityPolicy.HEADER : PriorityPolicy.JOB_TABLE);
        }
    }

    private record Endpoint(long mac, int ipv4, int udpPort)
    {
    }

    private SetupParser()
    {
    }

    /** The words of a table_add line as numbers where they are (the rest 0). */
    private static int[] numbers(final String[] words)
    {
        final int[] n = new int[words.length];
        for (int i = 0; i < words.length; i++)
        {
            n[i] = words[i].matches("\\d+") ? (int)Long.parseLong(words[i]) : 0; // bitmap words: unsigned 32-bit
        }
        return n;
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
        final Map<Integer, UpstreamRow> upstreamRows = new LinkedHashMap<>();
        final List<Integer> jobOrder = new ArrayList<>();
        final Map<Integer, EsaRow> esaRows = new LinkedHashMap<>();
        final Map<String, int[]> serverSources = new HashMap<>();
        final Map<String, Endpoint> serverEndpoints = new HashMap<>();
        final Map<String, int[]> sources = new HashMap<>();
        final Map<String, Long> credentials = new HashMap<>();
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
                        case "InaggIngress.job_table" ->
                        {
                            final int[] n = numbers(w);
                            if (w[2].equals("InaggIngress.set_upstream_job"))
                            {
                                upstreamRows.put(n[3], UpstreamRow.parse(w));
                                jobOrder.add(n[3]);
                            }
                            else if (w[2].equals("InaggIngress.set_esa_job"))
                            {
                                esaRows.put(n[3], new EsaRow(n[3], n[5], n[6], n[7], n[8], n[9], n[10], n[11], n[12],
                                    n[14], n[15], n[16]));
                            }
                            else
                            {
                                rows.put(n[3], new JobRow(n[3], n[5], n[6], n[7], n[8], n[9], n[10]));
                                jobOrder.add(n[3]);
                            }
                        }
                        case "InaggIngress.server_source" -> serverSources.put(w[3],
                            new int[]{WorkerEndpoint.parseIpv4(w[4]), Integer.parseInt(w[5])});
                        case "InaggEgress.server_endpoint" -> serverEndpoints.put(w[3], new Endpoint(
                            WorkerEndpoint.parseMac(w[5]), WorkerEndpoint.parseIpv4(w[6]), Integer.parseInt(w[7])));
                        case "InaggIngress.worker_source" -> sources.put(w[3] + "/" + w[4],
                            new int[]{WorkerEndpoint.parseIpv4(w[5]), Integer.parseInt(w[6])});
                        case "InaggIngress.join_credential" -> credentials.put(w[3] + "/" + w[4],
                            Long.parseUnsignedLong(w[6].substring(2), 16));
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
        for (final int jobId : jobOrder)
        {
            final UpstreamRow upstream = upstreamRows.get(jobId);
            if (upstream != null)
            {
                table.add(upstreamJob(upstream, sources, credentials, serverEndpoints, transport));
                continue;
            }
            final JobRow row = rows.get(jobId);
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
                workers.add(new WorkerEndpoint(peer, port, endpoint.mac(), endpoint.ipv4(), endpoint.udpPort(),
                    credentials.getOrDefault(key, 0L)));
            }
            table.add(new JobSpec(row.jobId(), row.slots(), row.base(), row.lanes(), row.group(), workers, null,
                row.session()));
        }
        for (final EsaRow row : esaRows.values())
        {
            if (table.esaPool() == null)
            {
                table.esaPool(row.pool());
            }
            else if (!table.esaPool().equals(row.pool()))
            {
                throw new IllegalArgumentException("job " + row.jobId() + ": its ESA pool differs from the others'");
            }
            final List<WorkerEndpoint> workers = new ArrayList<>();
            for (int worker = 0; worker < row.workers(); worker++)
            {
                workers.add(endpoint(row.jobId(), worker, row.group(), endpoints, sources, portOfGroupRid,
                    transport).withJoinCredential(credentials.getOrDefault(row.jobId() + "/" + worker, 0L)));
            }
            final String job = Integer.toString(row.jobId());
            final Endpoint endpoint = serverEndpoints.get(job);
            final int[] source = serverSources.get(job);
            if (endpoint == null || source == null || source[0] != endpoint.ipv4() || source[1] != endpoint.udpPort())
            {
                throw new IllegalArgumentException("job " + row.jobId() + ": server source and endpoint missing or"
                    + " different");
            }
            final int peer = transport.peer(endpoint.ipv4(), endpoint.udpPort(), row.serverPort(), endpoint.mac());
            final WorkerEndpoint server =
                new WorkerEndpoint(peer, row.serverPort(), endpoint.mac(), endpoint.ipv4(), endpoint.udpPort());
            table.add(new EsaJobSpec(row.jobId(), row.window(), row.lanes(), row.group(), row.flushGroup(),
                row.priority(), 0, workers, server));
        }
        return table;
    }

    /**
     * An upstream job: its local workers from the bitmap words, each with its registered source (port and MAC are
     * learnt from its first frame: the setup has no worker endpoint or multicast node for them); the others, which this
     * switch never serves, share a placeholder peer; the server from its endpoint row and the row's server port.
     */
    private static JobSpec upstreamJob(
        final UpstreamRow row, final Map<String, int[]> sources, final Map<String, Long> credentials,
        final Map<String, Endpoint> serverEndpoints, final FrameTransport transport)
    {
        final int[] local = row.localWorkers();
        if (local.length != row.contributors())
        {
            throw new IllegalArgumentException("job " + row.jobId() + ": " + row.contributors()
                + " contributors but " + local.length + " local workers in the bitmap");
        }
        final WorkerEndpoint nobody = new WorkerEndpoint(transport.sourceOnly(0, 0), 0, 0, 0, 0);
        final List<WorkerEndpoint> workers = new ArrayList<>(java.util.Collections.nCopies(row.workers(), nobody));
        for (final int worker : local)
        {
            final int[] source = sources.get(row.jobId() + "/" + worker);
            if (source == null)
            {
                throw new IllegalArgumentException("job " + row.jobId() + ": local worker " + worker + " lacks a source");
            }
            workers.set(worker, new WorkerEndpoint(transport.sourceOnly(source[0], source[1]), 0, 0, source[0],
                source[1], credentials.getOrDefault(row.jobId() + "/" + worker, 0L)));
        }
        final Endpoint endpoint = serverEndpoints.get(Integer.toString(row.jobId()));
        if (endpoint == null)
        {
            throw new IllegalArgumentException("job " + row.jobId() + ": no server endpoint");
        }
        final WorkerEndpoint server = new WorkerEndpoint(
            transport.peer(endpoint.ipv4(), endpoint.udpPort(), row.serverPort(), endpoint.mac()), row.serverPort(),
            endpoint.mac(), endpoint.ipv4(), endpoint.udpPort());
        return JobSpec.upstream(row.jobId(), row.slots(), row.base(), row.lanes(), workers, server, local)
            .withSession(row.session());
    }

    private static WorkerEndpoint endpoint(
        final int jobId, final int worker, final int group, final Map<String, Endpoint> endpoints,
        final Map<String, int[]> sources, final Map<String, Integer> portOfGroupRid, final FrameTransport transport)
    {
        final String key = jobId + "/" + worker;
        final Endpoint endpoint = endpoints.get(key);
        final int[] source = sources.get(key);
        final Integer port = portOfGroupRid.get(group + "/" + worker);
        if (endpoint == null || source == null || port == null)
        {
            throw new IllegalArgumentException("job " + jobId + " worker " + worker
                + " lacks a source, an endpoint or a multicast node");
        }
        if (source[0] != endpoint.ipv4() || source[1] != endpoint.udpPort())
        {
            throw new IllegalArgumentException("job " + jobId + " worker " + worker
                + ": registered source differs from its endpoint");
        }
        final int peer = transport.peer(endpoint.ipv4(), endpoint.udpPort(), port, endpoint.mac());
        return new WorkerEndpoint(peer, port, endpoint.mac(), endpoint.ipv4(), endpoint.udpPort());
    }
}
