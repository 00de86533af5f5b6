package org.inagg.p4.control;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.inagg.p4.softswitch.SoftwareSwitch;

/**
 * The jobs of one switch and the switch's own address: validated together (job ids, multicast groups and slot ranges
 * never shared, ranges inside the pool), then applied to a {@link SoftwareSwitch} or written out for the P4 programs.
 * <p>
 * The written configurations assume a switch freshly started with the program: bmv2 numbers multicast nodes from 0 in
 * creation order, and the TNA script numbers its nodes from 1. Adding a job to a switch that has run other jobs on the
 * same slots needs those slots cleared first; this class does not yet emit that (see docs/p4.md).
 */
public final class JobTable
{
    /** Registers that must start at zero for a job's first round: the used flags and the seen bitmaps. */
    static final List<String> V1MODEL_REGISTERS_TO_RESET = List.of("InaggIngress.used_reg", "InaggIngress.seen_reg");

    private final SwitchAddress switchAddress;
    private final Map<Integer, JobSpec> jobs = new LinkedHashMap<>();

    public JobTable(final SwitchAddress switchAddress)
    {
        this.switchAddress = switchAddress;
    }

    public SwitchAddress switchAddress()
    {
        return switchAddress;
    }

    public List<JobSpec> jobs()
    {
        return List.copyOf(jobs.values());
    }

    /**
     * Adds a job.
     *
     * @throws IllegalArgumentException if its id or multicast group is taken, its slots overlap another job's or leave
     *                                  the pool of {@link InaggP4#POOL_SLOTS}.
     */
    public JobTable add(final JobSpec job)
    {
        if (jobs.containsKey(job.jobId()))
        {
            throw new IllegalArgumentException("job " + job.jobId() + " is already in the table");
        }
        if (job.slotBase() + job.slots() > InaggP4.POOL_SLOTS)
        {
            throw new IllegalArgumentException("job " + job.jobId() + ": slots " + job.slotBase() + ".."
                + (job.slotBase() + job.slots() - 1) + " leave the pool of " + InaggP4.POOL_SLOTS);
        }
        for (final JobSpec other : jobs.values())
        {
            if (other.multicastGroup() == job.multicastGroup())
            {
                throw new IllegalArgumentException("job " + job.jobId() + ": multicast group " + job.multicastGroup()
                    + " is job " + other.jobId() + "'s");
            }
            if (job.slotBase() < other.slotBase() + other.slots() && other.slotBase() < job.slotBase() + job.slots())
            {
                throw new IllegalArgumentException("job " + job.jobId() + ": slots " + job.slotBase() + ".."
                    + (job.slotBase() + job.slots() - 1) + " overlap job " + other.jobId() + "'s slots "
                    + other.slotBase() + ".." + (other.slotBase() + other.slots() - 1));
            }
        }
        jobs.put(job.jobId(), job);
        return this;
    }

    /** Installs every job in a software switch, with each worker's peer registered. */
    public void applyTo(final SoftwareSwitch softwareSwitch)
    {
        for (final JobSpec job : jobs.values())
        {
            softwareSwitch.addJob(job.toSwitchJobConfig());
        }
    }

    /**
     * {@code simple_switch_CLI} commands that configure {@code inagg_v1model.p4} on a freshly started bmv2: clear the
     * registers a first round relies on, set the switch address, then per job its job table row, the registered source
     * of each worker, each worker's endpoint for egress, and its multicast group with one node per worker (replication
     * id = worker id).
     *
     * @throws IllegalArgumentException if a job needs more lanes or workers than the v1model program covers.
     */
    public List<String> simpleSwitchCommands()
    {
        final List<String> commands = new ArrayList<>();
        for (final String register : V1MODEL_REGISTERS_TO_RESET)
        {
            commands.add("register_reset " + register);
        }
        commands.add("table_set_default InaggEgress.switch_address InaggEgress.set_switch_address "
            + WorkerEndpoint.formatMac(switchAddress.mac()) + " " + WorkerEndpoint.formatIpv4(switchAddress.ipv4()));
        int nodeHandle = 0;
        for (final JobSpec job : jobs.values())
        {
            checkFits(job, InaggP4.V1MODEL_MAX_LANES, "v1model");
            commands.add("table_add InaggIngress.job_table InaggIngress.set_job " + job.jobId() + " => "
                + job.workerCount() + " " + job.slots() + " " + job.slotBase() + " " + job.lanes() + " "
                + job.multicastGroup());
            for (int worker = 0; worker < job.workerCount(); worker++)
            {
                final WorkerEndpoint endpoint = job.workers().get(worker);
                commands.add("table_add InaggIngress.worker_source InaggIngress.source_ok " + job.jobId() + " " + worker
                    + " " + WorkerEndpoint.formatIpv4(endpoint.ipv4()) + " " + endpoint.udpPort() + " =>");
            }
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
        }
        return commands;
    }

    /**
     * A BF Runtime Python script (run in {@code bfshell -b}) that configures {@code inagg_tna.p4} on a freshly started
     * Tofino: the same rows as {@link #simpleSwitchCommands()}, and the multicast groups in the packet replication
     * engine's {@code node} and {@code mgid} tables.
     *
     * @throws IllegalArgumentException if a job needs more lanes or workers than the TNA program covers.
     */
    public String bfrtPython()
    {
        final StringBuilder py = new StringBuilder();
        py.append("# Generated by org.inagg.p4.control.JobTable for inagg_tna.p4; run with: bfshell -b <this file>\n")
            .append("p4 = bfrt.inagg_tna.pipe\n")
            .append("ingress = p4.InaggIngress\n")
            .append("egress = p4.InaggEgress\n")
            .append("pre = bfrt.pre\n")
            .append("for register in (ingress.round_reg, ingress.seen0_reg, ingress.seen1_reg):\n")
            .append("    register.clear()\n")
            .append("egress.switch_address.set_default_with_set_switch_address(mac=").append(hexMac(switchAddress.mac()))
            .append(", ipv4=").append(hexIpv4(switchAddress.ipv4())).append(")\n");
        int nodeId = 1;
        for (final JobSpec job : jobs.values())
        {
            checkFits(job, InaggP4.TNA_MAX_LANES, "TNA");
            py.append("ingress.job_table.add_with_set_job(job_id=").append(job.jobId())
                .append(", workers=").append(job.workerCount())
                .append(", slots=").append(job.slots())
                .append(", slot_base=").append(job.slotBase())
                .append(", lanes=").append(job.lanes())
                .append(", mcast_grp=").append(job.multicastGroup()).append(")\n");
            final StringBuilder nodes = new StringBuilder();
            for (int worker = 0; worker < job.workerCount(); worker++)
            {
                final WorkerEndpoint endpoint = job.workers().get(worker);
                py.append("ingress.worker_source.add_with_source_ok(job_id=").append(job.jobId())
                    .append(", worker_id=").append(worker)
                    .append(", src_addr=").append(hexIpv4(endpoint.ipv4()))
                    .append(", src_port=").append(endpoint.udpPort()).append(")\n");
                py.append("egress.worker_endpoint.add_with_set_endpoint(job_id=").append(job.jobId())
                    .append(", worker=").append(worker)
                    .append(", mac=").append(hexMac(endpoint.mac()))
                    .append(", ipv4=").append(hexIpv4(endpoint.ipv4()))
                    .append(", udp_port=").append(endpoint.udpPort()).append(")\n");
                py.append("pre.node.add(MULTICAST_NODE_ID=").append(nodeId)
                    .append(", MULTICAST_RID=").append(worker)
                    .append(", MULTICAST_LAG_ID=[], DEV_PORT=[").append(endpoint.port()).append("])\n");
                nodes.append(nodes.isEmpty() ? "" : ", ").append(nodeId++);
            }
            py.append("pre.mgid.add(MGID=").append(job.multicastGroup())
                .append(", MULTICAST_NODE_ID=[").append(nodes)
                .append("], MULTICAST_NODE_L1_XID_VALID=[False] * ").append(job.workerCount())
                .append(", MULTICAST_NODE_L1_XID=[0] * ").append(job.workerCount()).append(")\n");
        }
        py.append("bfrt.complete_operations()\n");
        return py.toString();
    }

    private static void checkFits(final JobSpec job, final int maxLanes, final String program)
    {
        if (job.lanes() > maxLanes)
        {
            throw new IllegalArgumentException("job " + job.jobId() + ": " + job.lanes()
                + " lanes per packet; the " + program + " program aggregates at most " + maxLanes);
        }
        if (job.workerCount() > InaggP4.MAX_WORKERS)
        {
            throw new IllegalArgumentException("job " + job.jobId() + ": " + job.workerCount()
                + " workers; the P4 seen bitmaps cover at most " + InaggP4.MAX_WORKERS);
        }
    }

    private static String hexMac(final long mac)
    {
        return String.format("0x%012x", mac);
    }

    private static String hexIpv4(final int ipv4)
    {
        return String.format("0x%08x", ipv4);
    }
}
