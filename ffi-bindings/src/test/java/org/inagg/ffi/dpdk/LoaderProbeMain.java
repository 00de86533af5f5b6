package org.inagg.ffi.dpdk;

/** Child process of {@link NativeLibraryLoaderTest}: prints where the shim came from, or the loader's error. */
public final class LoaderProbeMain
{
    public static void main(final String[] args)
    {
        try
        {
            System.out.println("LOADED-FROM " + NativeLibraryLoader.load());
            System.out.println("ETH-CONF-SIZE " + org.inagg.ffi.dpdk.extr.inagg_dpdk_shim_h.inagg_eth_conf_size());
        }
        catch (final UnsatisfiedLinkError ex)
        {
            System.out.println("LOAD-FAILED\n" + ex.getMessage());
        }
    }
}
