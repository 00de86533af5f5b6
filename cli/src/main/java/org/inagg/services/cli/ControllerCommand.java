package org.inagg.services.cli;

import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.inagg.services.controller.Controller;
import org.inagg.services.controller.ControllerContext;
import org.inagg.services.controller.SoftwareSwitchBackend;
import org.inagg.services.controller.SwitchBackend;
import org.inagg.services.http.ApiToken;
import org.inagg.wire.InaggHeader;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code inagg controller}: admits jobs, registers their sources on a switch, keeps leases (docs/controller.md). */
@Command(
    name = "controller",
    mixinStandardHelpOptions = true,
    description = "Run the controller: workers started with --controller (or INAGG_CONTROLLER) register here; it "
        + "admits each job (id, worker ids, slot range, session), programs the switch with the ranks' sources, keeps "
        + "their leases and frees what ends or vanishes. State survives a restart in --journal.")
public final class ControllerCommand implements Callable<Integer>
{
    /** The environment variable the controller reads the operator's token from without --operator-token-file. */
    static final String OPERATOR_TOKEN_ENV = "INAGG_OPERATOR_TOKEN";

    @Spec
    private CommandSpec spec;

    @Option(names = "--bind", defaultValue = ControllerContext.BIND_DEFAULT,
        description = "HTTP address to listen on (default ${DEFAULT-VALUE}: this host only). Another address needs a "
            + "token (--token-file, INAGG_TOKEN) or --insecure.")
    private String bind;

    @Option(names = "--insecure",
        description = "Allow a --bind that other hosts reach without a token: anyone who reaches it may admit jobs "
            + "(never touch another job's, which needs its secret). For a trusted lab network only.")
    private boolean insecure;

    @Option(names = "--operator-token-file", paramLabel = "FILE",
        description = "The operator's secret (one line): a request carrying it as 'Authorization: Bearer TOKEN' may "
            + "list, inspect and free every job (default: $INAGG_OPERATOR_TOKEN if set, else no operator; each job is "
            + "then reachable only with its own secret).")
    private Path operatorTokenFile;

    @Option(names = "--trust-sources",
        description = "Take each rank's stated UDP source as it is; by default its IP must be the one its HTTP request "
            + "comes from. For ranks that reach the controller over another network (management network, NAT, proxy).")
    private boolean trustSources;

    @Option(names = "--switch-control", paramLabel = "URL",
        description = "The software switch's control port (inagg switch --control), e.g. http://127.0.0.1:7071.")
    private String switchControl;

    @Option(names = "--bmv2-thrift", paramLabel = "PORT",
        description = "Program bmv2 (simple_switch running inagg_v1model.p4) on this Thrift port instead; needs "
            + "--switch-data and a --bmv2-host per worker host.")
    private Integer bmv2Thrift;

    @Option(names = "--bmv2-mac", defaultValue = "02:00:00:00:00:fe",
        description = "With --bmv2-thrift: the switch's MAC (its IPv4 is --switch-data's) (default ${DEFAULT-VALUE}).")
    private String bmv2Mac;

    @Option(names = "--bmv2-host", paramLabel = "IP=PORT/MAC",
        description = "With --bmv2-thrift: a worker host, the bmv2 port it is attached to and its MAC, e.g. "
            + "10.0.0.1=1/02:00:00:00:00:01; repeatable.")
    private java.util.List<String> bmv2Hosts = new java.util.ArrayList<>();

    @Option(names = "--switch-data", paramLabel = "HOST:PORT",
        description = "Where workers send packets (default: the address the switch reports).")
    private String switchData;

    @Option(names = "--journal", defaultValue = ControllerContext.JOURNAL_DEFAULT,
        description = "The journal file: jobs, slot ranges, sessions and sources survive a restart (default "
            + "${DEFAULT-VALUE}).")
    private Path journal;

    @Option(names = "--token-file", paramLabel = "FILE",
        description = "The cluster's shared secret (one line) that every request must carry as 'Authorization: "
            + "Bearer TOKEN'; workers, agents and deploy send $INAGG_TOKEN, and the controller presents it to the "
            + "switch's control port too. It admits jobs; each job's registrations also need the job's own secret. "
            + "(default: $INAGG_TOKEN if set, else none: anyone who reaches --bind can admit jobs, and a warning "
            + "says so).")
    private Path tokenFile;

    @Option(names = "--lease-ms", defaultValue = "" + ControllerContext.LEASE_DEFAULT_MS,
        description = "A rank that does not renew for this long is lost (default ${DEFAULT-VALUE}).")
    private long leaseMs;

    @Option(names = "--plan-timeout-ms", defaultValue = "" + ControllerContext.PLAN_TIMEOUT_DEFAULT_MS,
        description = "POST /v1/plans stops a plan that takes longer and answers 503 (default ${DEFAULT-VALUE}).")
    private long planTimeoutMs;

    @Option(names = "--pool-slots", defaultValue = "" + ControllerContext.POOL_SLOTS_DEFAULT,
        description = "Slots of the switch's shared register pool (default ${DEFAULT-VALUE}).")
    private int poolSlots;

    @Option(names = "--esa-pool", paramLabel = "BASE:SLOTS",
        description = "The ESA aggregator pool inside the shared pool: no job's range is placed there.")
    private String esaPool;

    @Option(names = "--lanes", description = "Lanes per packet of every job (default: the switch's; "
        + ControllerContext.LANES_DEFAULT + " on bmv2, packets that fill a software switch's MTU, up to 363).")
    private Integer lanes;

    @Option(names = "--default-slots", defaultValue = "" + ControllerContext.DEFAULT_SLOTS_DEFAULT,
        description = "Slots of a job that does not ask (fewer for small tensors) (default ${DEFAULT-VALUE}).")
    private int defaultSlots;

    @Option(names = "--duration", defaultValue = "0", description = "Seconds to run; 0 runs until stopped (default "
        + "${DEFAULT-VALUE}).")
    private long durationSeconds;

    /** --esa-pool as {base, slots} inside --pool-slots, or null. */
    private int[] esaPool()
    {
        if (esaPool == null)
        {
            return null;
        }
        final String[] parts = esaPool.split(":", -1);
        if (parts.length != 2)
        {
            throw new IllegalArgumentException("--esa-pool wants BASE:SLOTS, got '" + esaPool + "'");
        }
        final int base = CliNumbers.parseInt("--esa-pool", "BASE", parts[0], 0, poolSlots - 1);
        return new int[]{base, CliNumbers.parseInt("--esa-pool", "SLOTS", parts[1], 1, poolSlots - base)};
    }

    private ApiToken operatorToken()
    {
        if (operatorTokenFile != null)
        {
            return ApiToken.fromFileOrEnvironment(operatorTokenFile, java.util.Map.of());
        }
        final String value = System.getenv(OPERATOR_TOKEN_ENV);
        return value == null ? ApiToken.NONE : ApiToken.of(value.strip(), OPERATOR_TOKEN_ENV);
    }

    private SwitchBackend bmv2()
    {
        if (switchData == null)
        {
            throw new IllegalArgumentException("--bmv2-thrift needs --switch-data IP:PORT (the switch's IPv4 address"
                + " and inagg UDP port)");
        }
        final java.net.InetSocketAddress data = Addresses.parse("--switch-data", switchData);
        final java.util.Map<java.net.InetAddress, org.inagg.services.controller.Bmv2Backend.Host> hosts =
            new java.util.HashMap<>();
        for (final String host : bmv2Hosts)
        {
            final int eq = host.indexOf('=');
            final int slash = host.indexOf('/');
            if (eq < 1 || slash < eq)
            {
                throw new IllegalArgumentException("--bmv2-host wants IP=PORT/MAC, got '" + host + "'");
            }
            try
            {
                hosts.put(java.net.InetAddress.getByName(host.substring(0, eq)),
                    new org.inagg.services.controller.Bmv2Backend.Host(Integer.parseInt(host.substring(eq + 1, slash)),
                        org.inagg.p4.control.WorkerEndpoint.parseMac(host.substring(slash + 1))));
            }
            catch (final java.io.IOException | RuntimeException ex)
            {
                throw new IllegalArgumentException("--bmv2-host '" + host + "': " + ex.getMessage(), ex);
            }
        }
        final org.inagg.p4.bmv2.SimpleSwitchCli cli = new org.inagg.p4.bmv2.SimpleSwitchCli(
            org.inagg.p4.bmv2.P4Toolchain.locate(), bmv2Thrift);
        final org.inagg.p4.bmv2.Bmv2Switch bmv2 = new org.inagg.p4.bmv2.Bmv2Switch(cli,
            new org.inagg.p4.control.SwitchAddress(org.inagg.p4.control.WorkerEndpoint.parseMac(bmv2Mac),
                org.inagg.p4.control.WorkerEndpoint.parseIpv4(data.getAddress().getHostAddress())));
        return new org.inagg.services.controller.Bmv2Backend(bmv2, data, hosts);
    }

    @Override
    public Integer call() throws InterruptedException
    {
        final PrintWriter out = spec.commandLine().getOut();
        CliNumbers.require("--lease-ms", leaseMs, 100, Long.MAX_VALUE);
        CliNumbers.require("--plan-timeout-ms", planTimeoutMs, 1, ControllerContext.PLAN_TIMEOUT_MAX_MS);
        CliNumbers.require("--pool-slots", poolSlots, 1, Integer.MAX_VALUE);
        CliNumbers.require("--duration", durationSeconds, 0, Long.MAX_VALUE);
        if (lanes != null)
        {
            CliNumbers.require("--lanes", lanes, 1, InaggHeader.MAX_ELEMENTS_FOR_1500_MTU);
        }
        if ((switchControl == null) == (bmv2Thrift == null))
        {
            throw new IllegalArgumentException("give one switch: --switch-control URL (software switch) or "
                + "--bmv2-thrift PORT (bmv2)");
        }
        final int[] esa = esaPool();
        final ApiToken token = ApiToken.fromFileOrEnvironment(tokenFile, System.getenv());
        final SwitchBackend backend = bmv2Thrift != null ? bmv2() : new SoftwareSwitchBackend(URI.create(
            switchControl.contains("://") ? switchControl : "http://" + switchControl), switchData == null ? null
            : Addresses.parse("--switch-data", switchData), Duration.ofSeconds(3), token);
        final ControllerContext ctx = new ControllerContext().bind(Addresses.parse("--bind", bind)).journal(journal)
            .leaseMs(leaseMs).planTimeoutMs(planTimeoutMs)
            .poolSlots(poolSlots).lanes(lanes == null ? -1 : lanes).defaultSlots(defaultSlots).switchBackend(backend)
            .token(token).operatorToken(operatorToken()).insecure(insecure).trustSources(trustSources);
        if (esa != null)
        {
            ctx.esaPool(esa[0], esa[1]);
        }
        final Controller controller = Controller.launch(ctx);
        final CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            controller.close();
            backend.close();
            stopped.countDown();
        }));
        out.printf("inagg controller listening on %s, programming %s, journal %s, jobs of %d lanes a packet (%s)%n",
            controller.url(), backend.describe(), ctx.journal(), ctx.lanes(), lanes != null ? "--lanes"
            : ctx.lanesWhy());
        out.printf("  workers: bin/inagg worker --controller %s --job-name NAME ... (or INAGG_CONTROLLER=%s)%n",
            controller.url(), controller.url());
        if (!token.required())
        {
            out.printf("  warning: no token (--token-file or %s): anyone who reaches %s can admit jobs (a job's "
                + "ranks, renewals and removal still need its secret)%n", ApiToken.ENV, controller.url());
        }
        out.flush();
        if (durationSeconds > 0)
        {
            if (!stopped.await(durationSeconds, TimeUnit.SECONDS))
            {
                controller.close();
                backend.close();
            }
        }
        else
        {
            stopped.await();
        }
        return 0;
    }
}
