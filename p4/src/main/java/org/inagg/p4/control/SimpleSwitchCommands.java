package org.inagg.p4.control;

import java.util.ArrayList;
import java.util.List;

import org.inagg.p4.esa.AllocationMode;
import org.inagg.p4.esa.PriorityPolicy;
import org.inagg.wire.InaggHeader;

/**
 * The {@code simple_switch_CLI} commands that configure {@code inagg_v1model.p4} on bmv2 from a {@link JobTable}: the
 * whole table for a freshly started switch ({@link #forTable}), or one job's rows ({@link #slotJob}, {@link #esaJob})
 * for {@code org.inagg.p4.bmv2.Bmv2Switch} to program a running one. Limits are checked by {@link JobValidator}.
 */
final class SimpleSwitchCommands
{
    /** Job modes of the v1model job table's {@code set_esa_job}. */
    private static final int MODE_ESA = 1;
    private static final int MODE_ATP = 2;

    private SimpleSwitchCommands()
    {
    }

    /**
     * {@code simple_switch_CLI} commands that configure {@code inagg_v1model.p4} on a freshly started bmv2: clear the
     * registers a first round relies on, set the switch address, then per job its job table row, the registered source
     * of each worker, each worker's endpoint for egress, and its multicast group with one node per worker (replication
     * id = worker id). ESA jobs follow the slot jobs: also the keys and tombstones reset, and per job its
     * {@code set_esa_job} row (workers, window, lanes, result group, flush group, mode, first copy of the pool, pool
     * mask, hash offset, priority from the header, table priority, server port), its server's source and endpoint, its
     * result group with the server's node last ({@link JobTable#SERVER_RID}) and its flush group (the server twice:
     * {@link JobTable#FLUSH_RID}, then {@link JobTable#SERVER_RID}). An upstream job ({@link JobSpec#upstream()}) has a
     * {@code set_upstream_job} row instead (workers, slots, slot base, lanes, contributors, server port, the local
     * workers' 8 bitmap words as unsigned decimals), the registered source of each local worker, and its server's
     * endpoint; no worker endpoints and no multicast group (the switch sends only to the server).
     *
     * @throws IllegalArgumentException if a job needs more lanes or workers than the v1model program covers.
     */
    static List<String> forTable(final JobTable table)
    {
        final List<String> commands = new ArrayList<>();
        for (final String register : JobTable.V1MODEL_REGISTERS_TO_RESET)
        {
            commands.add("register_reset " + register);
        }
        final List<EsaJobSpec> esaJobs = table.esaJobs();
        if (!esaJobs.isEmpty())
        {
            for (final String register : JobTable.V1MODEL_ESA_REGISTERS_TO_RESET)
            {
                commands.add("register_reset " + register);
            }
        }
        commands.add(addressCommand(table.switchAddress()));
        int nodeHandle = 0;
        for (final JobSpec job : table.jobs())
        {
            nodeHandle = slotJob(job, nodeHandle, commands);
        }
        for (final EsaJobSpec job : esaJobs)
        {
            nodeHandle = esaJob(table.esaPool(), job, nodeHandle, commands);
        }
        return commands;
    }

    /** The {@code simple_switch_CLI} command that sets the switch's own addresses (egress {@code switch_address}). */
    static String addressCommand(final SwitchAddress switchAddress)
    {
        return "table_set_default InaggEgress.switch_address InaggEgress.set_switch_address "
            + WorkerEndpoint.formatMac(switchAddress.mac()) + " " + WorkerEndpoint.formatIpv4(switchAddress.ipv4());
    }

    /**
     * One slot-protocol or upstream job's rows, as {@link #forTable} writes them, appended to
     * {@code commands}: its job table row, worker sources, worker endpoints, multicast group and nodes (or, upstream,
     * its server endpoint). Each {@code mc_node_associate} names its node by the handle bmv2 gives it when nodes are
     * numbered from {@code firstNodeHandle} in creation order; a caller whose bmv2 hands out other handles rewrites
     * them from the {@code mc_node_create} answers (the k-th node created here is {@code firstNodeHandle + k}).
     *
     * @return the handle of the node after this job's last.
     * @throws IllegalArgumentException if the job needs more lanes or workers than the v1model program covers.
     */
    static int slotJob(final JobSpec job, final int firstNodeHandle, final List<String> commands)
    {
        JobValidator.checkFits(job, InaggP4.V1MODEL_MAX_LANES, "v1model");
        if (job.isUpstream())
        {
            upstreamCommands(job, commands);
            return firstNodeHandle;
        }
        int nodeHandle = firstNodeHandle;
        commands.add("table_add InaggIngress.job_table InaggIngress.set_job " + job.jobId() + " => "
            + job.workerCount() + " " + job.slots() + " " + job.slotBase() + " " + job.lanes() + " "
            + job.multicastGroup() + " " + job.session());
        for (int worker = 0; worker < job.workerCount(); worker++)
        {
            final WorkerEndpoint endpoint = job.workers().get(worker);
            commands.add("table_add InaggIngress.worker_source InaggIngress.source_ok " + job.jobId() + " " + worker
                + " " + WorkerEndpoint.formatIpv4(endpoint.ipv4()) + " " + endpoint.udpPort() + " =>");
        }
        joinCredentialCommands(job.jobId(), job.workers(), commands);
        for (int worker = 0; worker < job.workerCount(); worker++)
        {
            final WorkerEndpoint endpoint = job.workers().get(worker);
            commands.add("table_add InaggEgress.worker_endpoint InaggEgress.set_endpoint " + job.jobId() + " "
                + worker + " => " + WorkerEndpoint.formatMac(endpoint.mac()) + " "
                + WorkerEndpoint.formatIpv4(endpoint.ipv4()) + " " + endpoint.udpPort());
        }
        commands.add("mc_mgrp_create " + job.multicastGroup());
        for (int worker = 0; worker < job.workerCount(); worker++)
        {
            commands.add("mc_node_create " + worker + " " + job.workers().get(worker).port());
            commands.add("mc_node_associate " + job.multicastGroup() + " " + nodeHandle++);
        }
        return nodeHandle;
    }

    /**
     * The {@code join_credential} rows of a job's workers that have a JOIN credential: a JOIN of such a worker id must
     * show it (two lanes, high word first) or is dropped and counted ({@code C_DROP_BAD_CREDENTIAL}); a worker without
     * a row needs none.
     */
    private static void joinCredentialCommands(final int jobId, final List<WorkerEndpoint> workers,
        final List<String> commands)
    {
        for (int worker = 0; worker < workers.size(); worker++)
        {
            joinCredentialCommand(jobId, worker, workers.get(worker), commands);
        }
    }

    private static void joinCredentialCommand(final int jobId, final int worker, final WorkerEndpoint endpoint,
        final List<String> commands)
    {
        if (endpoint.joinCredential() != InaggHeader.NO_CREDENTIAL)
        {
            commands.add("table_add InaggIngress.join_credential InaggIngress.set_join_credential " + jobId + " "
                + worker + " => " + WorkerEndpoint.hexCredential(endpoint.joinCredential()));
        }
    }

    private static void upstreamCommands(final JobSpec job, final List<String> commands)
    {
        final JobSpec.Upstream upstream = job.upstream();
        final StringBuilder row = new StringBuilder("table_add InaggIngress.job_table InaggIngress.set_upstream_job ")
            .append(job.jobId()).append(" => ").append(job.workerCount()).append(' ').append(job.slots()).append(' ')
            .append(job.slotBase()).append(' ').append(job.lanes()).append(' ').append(job.contributors()).append(' ')
            .append(upstream.server().port());
        for (final int word : upstream.bitmapWords(InaggP4.BITMAP_WORDS))
        {
            row.append(' ').append(Integer.toUnsignedString(word));
        }
        row.append(' ').append(job.session());
        commands.add(row.toString());
        for (final int worker : upstream.localWorkers())
        {
            final WorkerEndpoint endpoint = job.workers().get(worker);
            commands.add("table_add InaggIngress.worker_source InaggIngress.source_ok " + job.jobId() + " " + worker
                + " " + WorkerEndpoint.formatIpv4(endpoint.ipv4()) + " " + endpoint.udpPort() + " =>");
        }
        for (final int worker : upstream.localWorkers())
        {
            joinCredentialCommand(job.jobId(), worker, job.workers().get(worker), commands);
        }
        final WorkerEndpoint server = upstream.server();
        commands.add("table_add InaggEgress.server_endpoint InaggEgress.set_endpoint " + job.jobId() + " => "
            + WorkerEndpoint.formatMac(server.mac()) + " " + WorkerEndpoint.formatIpv4(server.ipv4()) + " "
            + server.udpPort());
    }

    /**
     * One ESA job's rows, as {@link #forTable} writes them (with the table's pool), appended to
     * {@code commands}; node handles as for {@link #slotJob}.
     *
     * @return the handle of the node after this job's last.
     * @throws IllegalStateException if no ESA pool is set.
     */
    static int esaJob(
        final EsaPool esaPool, final EsaJobSpec job, final int firstNodeHandle, final List<String> commands)
    {
        if (esaPool == null)
        {
            throw new IllegalStateException("job " + job.jobId() + ": set the ESA pool first");
        }
        JobValidator.checkFits(job.jobId(), job.lanes(), job.workerCount(), InaggP4.V1MODEL_MAX_LANES, "v1model");
        int nodeHandle = firstNodeHandle;
        final WorkerEndpoint server = job.server();
        commands.add("table_add InaggIngress.job_table InaggIngress.set_esa_job " + job.jobId() + " => "
            + job.workerCount() + " " + job.window() + " " + job.lanes() + " " + job.multicastGroup() + " "
            + job.flushGroup() + " " + (esaPool.mode() == AllocationMode.PREEMPTIVE ? MODE_ESA : MODE_ATP) + " "
            + esaPool.firstCopy() + " " + (esaPool.aggregators() - 1) + " " + esaPool.hashOffset(job.jobId()) + " "
            + (esaPool.policy() == PriorityPolicy.HEADER ? 1 : 0) + " " + job.tablePriority(esaPool.policy()) + " "
            + server.port() + " " + JobTable.ESA_SESSION);
        for (int worker = 0; worker < job.workerCount(); worker++)
        {
            final WorkerEndpoint endpoint = job.workers().get(worker);
            commands.add("table_add InaggIngress.worker_source InaggIngress.source_ok " + job.jobId() + " " + worker
                + " " + WorkerEndpoint.formatIpv4(endpoint.ipv4()) + " " + endpoint.udpPort() + " =>");
        }
        joinCredentialCommands(job.jobId(), job.workers(), commands);
        commands.add("table_add InaggIngress.server_source InaggIngress.server_ok " + job.jobId() + " "
            + WorkerEndpoint.formatIpv4(server.ipv4()) + " " + server.udpPort() + " =>");
        for (int worker = 0; worker < job.workerCount(); worker++)
        {
            final WorkerEndpoint endpoint = job.workers().get(worker);
            commands.add("table_add InaggEgress.worker_endpoint InaggEgress.set_endpoint " + job.jobId() + " "
                + worker + " => " + WorkerEndpoint.formatMac(endpoint.mac()) + " "
                + WorkerEndpoint.formatIpv4(endpoint.ipv4()) + " " + endpoint.udpPort());
        }
        commands.add("table_add InaggEgress.server_endpoint InaggEgress.set_endpoint " + job.jobId() + " => "
            + WorkerEndpoint.formatMac(server.mac()) + " " + WorkerEndpoint.formatIpv4(server.ipv4()) + " "
            + server.udpPort());
        commands.add("mc_mgrp_create " + job.multicastGroup());
        for (int worker = 0; worker < job.workerCount(); worker++)
        {
            commands.add("mc_node_create " + worker + " " + job.workers().get(worker).port());
            commands.add("mc_node_associate " + job.multicastGroup() + " " + nodeHandle++);
        }
        commands.add("mc_node_create " + JobTable.SERVER_RID + " " + server.port());
        commands.add("mc_node_associate " + job.multicastGroup() + " " + nodeHandle++);
        commands.add("mc_mgrp_create " + job.flushGroup());
        commands.add("mc_node_create " + JobTable.FLUSH_RID + " " + server.port());
        commands.add("mc_node_associate " + job.flushGroup() + " " + nodeHandle++);
        commands.add("mc_node_create " + JobTable.SERVER_RID + " " + server.port());
        commands.add("mc_node_associate " + job.flushGroup() + " " + nodeHandle++);
        return nodeHandle;
    }
}
