package org.inagg.ffi.dpdk;

/**
 * Child process of {@link EalTest}: EAL init with a bad argument must fail with a clear {@link EalException}, and a
 * second attempt in the same process must be refused with a reason (DPDK keeps state from the failed one).
 */
public final class EalInitFailureMain
{
    public static void main(final String[] args)
    {
        final EalConfig bad = DpdkTestEnvironment.baseConfig("bad").args("--no-such-eal-option");
        try
        {
            Eal.init(bad);
            System.out.println("UNEXPECTED: init succeeded");
            System.exit(2);
        }
        catch (final EalException ex)
        {
            System.out.println("EAL-EXCEPTION errno=" + ex.errno());
            System.out.println("MESSAGE-BEGIN\n" + ex.getMessage() + "\nMESSAGE-END");
        }
        try
        {
            Eal.init(DpdkTestEnvironment.baseConfig("again"));
            System.out.println("UNEXPECTED: second init attempt was let through");
            System.exit(2);
        }
        catch (final IllegalStateException ex)
        {
            System.out.println("SECOND-INIT-REFUSED " + ex.getMessage());
        }
        System.out.println("DONE");
        System.exit(0);
    }
}
