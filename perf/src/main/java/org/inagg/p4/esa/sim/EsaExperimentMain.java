package org.inagg.p4.esa.sim;

import java.util.Locale;

import org.inagg.p4.esa.PriorityPolicy;
import org.inagg.p4.esa.sim.EsaExperiment.Outcome;
import org.inagg.p4.esa.sim.EsaExperiment.Scheme;
import org.inagg.p4.esa.sim.EsaExperiment.Setup;

/**
 * The experiment of docs/esa.md as a program: {@link EsaExperiment}'s default setup over ESA, ATP and SwitchML, one
 * table each. Arguments, all optional, in order: window (32), host delay ns (2000), seed (1), {@link PriorityPolicy},
 * timeout ns. Lives in perf, beside the other experiment mains; the harness it runs stays in p4.
 */
public final class EsaExperimentMain
{
    private EsaExperimentMain()
    {
    }

    public static void main(final String[] args)
    {
        final int window = args.length > 0 ? Integer.parseInt(args[0]) : 32;
        final long hostDelay = args.length > 1 ? Long.parseLong(args[1]) : 2_000;
        final long seed = args.length > 2 ? Long.parseLong(args[2]) : 1;
        final Setup base = EsaExperiment.defaultSetup(window, hostDelay, seed);
        final PriorityPolicy policy = args.length > 3 ? PriorityPolicy.valueOf(args[3]) : base.policy();
        final long timeoutNs = args.length > 4 ? Long.parseLong(args[4]) : base.timeoutNs();
        final Setup setup = new Setup(base.jobs(), base.aggregators(), base.window(), base.lanes(), base.gbps(),
            base.propagationNs(), timeoutNs, base.maxHostDelayNs(), base.drop(), base.duplicate(), base.seed(), policy,
            base.controlPeriodNs(), base.limitNs(), base.lossyServers());
        System.out.println(EsaExperiment.describe(setup));
        Outcome esa = null;
        for (final Scheme scheme : Scheme.values())
        {
            final Outcome outcome = EsaExperiment.run(scheme, setup);
            if (scheme == Scheme.ESA)
            {
                esa = outcome;
            }
            System.out.println(EsaExperiment.format(outcome, setup));
            if (esa != null && scheme != Scheme.ESA)
            {
                System.out.printf(Locale.ROOT, "  ESA average JCT improvement over %s: %.3fx%n", scheme,
                    outcome.averageJctMicros() / esa.averageJctMicros());
            }
        }
    }
}
