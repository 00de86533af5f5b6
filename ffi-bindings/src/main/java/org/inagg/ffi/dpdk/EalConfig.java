package org.inagg.ffi.dpdk;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Settings for {@link Eal#init(EalConfig)}, turned into EAL's command line by {@link #toArguments()}.
 * Fluent setters; {@link #conclude()} fills defaults and validates once.
 *
 * <pre>{@code
 * new EalConfig().lcores("0").vdev("net_ring0").noHuge(true).memoryMb(512).noPci(true)
 *     .filePrefix("inagg-" + ProcessHandle.current().pid());
 * }</pre>
 * gives {@code inagg -l 0 --no-huge -m 512 --no-pci --file-prefix inagg-1234 --vdev net_ring0}.
 */
public final class EalConfig
{
    public static final String PROGRAM_NAME_DEFAULT = "inagg";
    public static final String LCORES_DEFAULT = "0";
    public static final int MEMORY_MB_NO_HUGE_DEFAULT = 512;

    private static final Pattern LCORES = Pattern.compile("[0-9,@()\\-]+");
    private static final Pattern FILE_PREFIX = Pattern.compile("[A-Za-z0-9_.\\-]+");

    private String programName = PROGRAM_NAME_DEFAULT;
    private String lcores;
    private String filePrefix;
    private boolean noHuge;
    private int memoryMb;
    private boolean noPci;
    private String logLevel;
    private final List<String> vdevs = new ArrayList<>();
    private final List<String> pciAllow = new ArrayList<>();
    private final List<String> extraArgs = new ArrayList<>();
    private boolean concluded;

    public EalConfig programName(final String programName)
    {
        this.programName = programName;
        return this;
    }

    /** EAL {@code -l}: a list such as {@code 0}, {@code 0-1} or {@code 2,4}. */
    public EalConfig lcores(final String lcores)
    {
        this.lcores = lcores;
        return this;
    }

    /** EAL {@code --file-prefix}: distinct for every DPDK process on the host. Default {@code inagg-<pid>}. */
    public EalConfig filePrefix(final String filePrefix)
    {
        this.filePrefix = filePrefix;
        return this;
    }

    /** EAL {@code --no-huge}: anonymous memory instead of hugepages (tests, CI, virtual devices). */
    public EalConfig noHuge(final boolean noHuge)
    {
        this.noHuge = noHuge;
        return this;
    }

    /** EAL {@code -m}: memory in MiB. Default {@value #MEMORY_MB_NO_HUGE_DEFAULT} with --no-huge, EAL's own otherwise. */
    public EalConfig memoryMb(final int memoryMb)
    {
        this.memoryMb = memoryMb;
        return this;
    }

    /** EAL {@code --no-pci}: do not scan the PCI bus. */
    public EalConfig noPci(final boolean noPci)
    {
        this.noPci = noPci;
        return this;
    }

    /** EAL {@code --log-level}, e.g. {@code notice} or {@code pmd.net.memif:debug}. */
    public EalConfig logLevel(final String logLevel)
    {
        this.logLevel = logLevel;
        return this;
    }

    /** EAL {@code --vdev}: a virtual device with its arguments, e.g. {@code net_memif0,role=server,socket=/tmp/m}. */
    public EalConfig vdev(final String devargs)
    {
        vdevs.add(devargs);
        return this;
    }

    /** EAL {@code -a}: a PCI device to use, e.g. {@code 0000:3b:00.0}. */
    public EalConfig pciDevice(final String pciAddress)
    {
        pciAllow.add(pciAddress);
        return this;
    }

    /** Further EAL arguments passed as they are, after the ones above. */
    public EalConfig args(final String... args)
    {
        Collections.addAll(extraArgs, args);
        return this;
    }

    public String filePrefix()
    {
        return filePrefix;
    }

    public List<String> vdevs()
    {
        return List.copyOf(vdevs);
    }

    /**
     * Fills defaults and validates.
     *
     * @return this.
     * @throws IllegalArgumentException naming the bad setting.
     */
    public EalConfig conclude()
    {
        if (concluded)
        {
            return this;
        }
        if (programName == null || programName.isBlank())
        {
            throw new IllegalArgumentException("programName must not be blank");
        }
        if (lcores == null)
        {
            lcores = LCORES_DEFAULT;
        }
        if (!LCORES.matcher(lcores).matches())
        {
            throw new IllegalArgumentException("lcores must be an EAL -l list such as 0 or 0-1, got '" + lcores + "'");
        }
        if (filePrefix == null)
        {
            filePrefix = "inagg-" + ProcessHandle.current().pid();
        }
        if (!FILE_PREFIX.matcher(filePrefix).matches())
        {
            throw new IllegalArgumentException(
                "filePrefix may hold only letters, digits, '_', '.', '-', got '" + filePrefix + "'");
        }
        if (memoryMb < 0)
        {
            throw new IllegalArgumentException("memoryMb must be positive, got " + memoryMb);
        }
        if (noHuge && memoryMb == 0)
        {
            memoryMb = MEMORY_MB_NO_HUGE_DEFAULT;
        }
        for (final String vdev : vdevs)
        {
            if (vdev == null || vdev.isBlank() || vdev.chars().anyMatch(Character::isWhitespace))
            {
                throw new IllegalArgumentException("vdev must be non-blank devargs without spaces, got '" + vdev + "'");
            }
        }
        if (noPci && !pciAllow.isEmpty())
        {
            throw new IllegalArgumentException("noPci contradicts PCI devices " + pciAllow);
        }
        concluded = true;
        return this;
    }

    /** The EAL command line, program name first. Calls {@link #conclude()}. */
    public List<String> toArguments()
    {
        conclude();
        final List<String> args = new ArrayList<>();
        args.add(programName);
        args.add("-l");
        args.add(lcores);
        if (noHuge)
        {
            args.add("--no-huge");
        }
        if (memoryMb > 0)
        {
            args.add("-m");
            args.add(Integer.toString(memoryMb));
        }
        if (noPci)
        {
            args.add("--no-pci");
        }
        for (final String pci : pciAllow)
        {
            args.add("-a");
            args.add(pci);
        }
        args.add("--file-prefix");
        args.add(filePrefix);
        if (logLevel != null)
        {
            args.add("--log-level");
            args.add(logLevel);
        }
        for (final String vdev : vdevs)
        {
            args.add("--vdev");
            args.add(vdev);
        }
        args.addAll(extraArgs);
        return args;
    }

    @Override
    public String toString()
    {
        return String.join(" ", toArguments());
    }
}
