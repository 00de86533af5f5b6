package org.inagg.ffi.dpdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.foreign.AddressLayout;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.assertj.core.api.SoftAssertions;
import org.inagg.ffi.dpdk.extr.dpdk_h;
import org.inagg.ffi.dpdk.extr.inagg_dpdk_shim_h;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The committed bindings must agree with the C declarations: same function names, same arity, each C type mapped to
 * the right Java carrier (and, where the library loads, the right {@link FunctionDescriptor} layout). Fails as soon
 * as the shim header or the bindings drift; regenerate with scripts/regenerate-bindings.sh.
 */
class BindingsMatchHeaderTest
{
    private static final Pattern SHIM_PROTOTYPE =
        Pattern.compile("^\\s*([\\w\\s*]+?)\\s*\\b(inagg_\\w+)\\s*\\(([^)]*)\\)\\s*;", Pattern.MULTILINE);

    /** A C type as the binding must carry it. */
    record CType(String c, Class<?> carrier, long byteSize)
    {
        static CType of(final String declaration)
        {
            final String t = declaration.replaceAll("\\bconst\\b", "").replaceAll("\\s+", " ").trim();
            if (t.contains("*"))
            {
                return new CType(t, MemorySegment.class, ValueLayout.ADDRESS.byteSize());
            }
            return switch (t)
            {
                case "void" -> new CType(t, void.class, 0);
                case "uint16_t", "int16_t" -> new CType(t, short.class, 2);
                case "int", "unsigned int", "unsigned", "uint32_t", "int32_t" -> new CType(t, int.class, 4);
                case "uint64_t", "int64_t", "size_t" -> new CType(t, long.class, 8);
                case "char", "uint8_t" -> new CType(t, byte.class, 1);
                default -> throw new AssertionError("no Java carrier known for C type '" + t + "': extend CType.of");
            };
        }
    }

    record Prototype(String name, CType returns, List<CType> params, String text)
    {
    }

    @Test
    void shouldBindEveryShimFunctionWithSameNameArityAndCarriers() throws IOException
    {
        final Map<String, Prototype> header = shimPrototypes();
        assertThat(header).hasSizeGreaterThanOrEqualTo(20);

        assertMatches(inagg_dpdk_shim_h.class, header);
    }

    @Test
    void shouldHaveNoBindingWithoutShimPrototype() throws IOException
    {
        assertThat(boundFunctions(inagg_dpdk_shim_h.class)).isEqualTo(shimPrototypes().keySet());
    }

    @Test
    void shouldDescribeShimFunctionsWithLayoutsOfTheirCTypes() throws Exception
    {
        DpdkTestEnvironment.assumeDpdk(); // $descriptor() resolves the symbol, so the library must load
        final Map<String, Prototype> header = shimPrototypes();
        final SoftAssertions soft = new SoftAssertions();
        for (final Prototype p : header.values())
        {
            final FunctionDescriptor desc =
                (FunctionDescriptor)inagg_dpdk_shim_h.class.getMethod(p.name() + "$descriptor").invoke(null);
            final MethodHandle handle =
                (MethodHandle)inagg_dpdk_shim_h.class.getMethod(p.name() + "$handle").invoke(null);
            soft.assertThat(desc.argumentLayouts()).as(p.text()).hasSize(p.params().size());
            for (int i = 0; i < Math.min(p.params().size(), desc.argumentLayouts().size()); i++)
            {
                assertLayout(soft, p.text() + " parameter " + i, desc.argumentLayouts().get(i), p.params().get(i));
            }
            if (p.returns().carrier() == void.class)
            {
                soft.assertThat(desc.returnLayout()).as(p.text()).isEmpty();
            }
            else
            {
                soft.assertThat(desc.returnLayout()).as(p.text()).isPresent();
                desc.returnLayout().ifPresent(l -> assertLayout(soft, p.text() + " return", l, p.returns()));
            }
            soft.assertThat(handle.type().returnType()).as(p.text()).isEqualTo(p.returns().carrier());
            soft.assertThat(handle.type().parameterList()).as(p.text())
                .isEqualTo(p.params().stream().map(CType::carrier).collect(Collectors.toList()));
        }
        soft.assertAll();
    }

    @Test
    void shouldBindDpdkFunctionsAsDeclaredInSystemDpdkHeaders() throws IOException
    {
        final Path include = Path.of(System.getProperty("inagg.dpdk.include", "/usr/include/dpdk"));
        if (!Files.isDirectory(include))
        {
            // The shim is built against these headers: where DPDK is required (CI), they are too.
            if (Boolean.getBoolean("inagg.dpdk.tests.require"))
            {
                Assertions.fail("DPDK is required here (-Dinagg.dpdk.tests.require=true) but there are no DPDK headers at "
                    + include + " (libdpdk-dev)");
            }
            Assumptions.abort("no DPDK headers at " + include + " (libdpdk-dev)");
        }
        final String source = dpdkSource(include);
        final Map<String, Prototype> declared = new LinkedHashMap<>();
        for (final String name : boundFunctions(dpdk_h.class))
        {
            final Matcher m = Pattern.compile("(?:^|[;}])\\s*([^;{}]*?)\\b" + name + "\\s*\\(([^)]*)\\)\\s*;")
                .matcher(source);
            assertThat(m.find()).as("declaration of %s in %s", name, include).isTrue();
            declared.put(name, prototype(name, stripAttributes(m.group(1)), m.group(2), m.group(0).trim()));
        }
        assertMatches(dpdk_h.class, declared);
    }

    private static void assertMatches(final Class<?> bindings, final Map<String, Prototype> prototypes)
    {
        final SoftAssertions soft = new SoftAssertions();
        for (final Prototype p : prototypes.values())
        {
            final List<Method> candidates = Arrays.stream(bindings.getMethods())
                .filter(m -> m.getName().equals(p.name()) && Modifier.isStatic(m.getModifiers()))
                .toList();
            soft.assertThat(candidates).as("binding for %s", p.text()).hasSize(1);
            if (candidates.size() != 1)
            {
                continue;
            }
            final Method method = candidates.getFirst();
            soft.assertThat(method.getParameterCount()).as("arity of %s", p.text()).isEqualTo(p.params().size());
            soft.assertThat(method.getParameterTypes()).as("parameter carriers of %s", p.text())
                .containsExactly(p.params().stream().map(CType::carrier).toArray(Class<?>[]::new));
            soft.assertThat(method.getReturnType()).as("return carrier of %s", p.text())
                .isEqualTo(p.returns().carrier());
            for (final String suffix : List.of("$descriptor", "$handle", "$address"))
            {
                soft.assertThat(Stream.of(bindings.getMethods()).anyMatch(m -> m.getName().equals(p.name() + suffix)))
                    .as("%s%s()", p.name(), suffix).isTrue();
            }
        }
        soft.assertAll();
    }

    private static void assertLayout(
        final SoftAssertions soft, final String what, final MemoryLayout layout, final CType expected)
    {
        if (expected.carrier() == MemorySegment.class)
        {
            soft.assertThat(layout).as(what).isInstanceOf(AddressLayout.class);
        }
        else
        {
            soft.assertThat(layout).as(what).isInstanceOf(ValueLayout.class);
            if (layout instanceof ValueLayout v)
            {
                soft.assertThat(v.carrier()).as(what).isEqualTo(expected.carrier());
                soft.assertThat(v.byteSize()).as(what).isEqualTo(expected.byteSize());
            }
        }
    }

    static Set<String> boundFunctions(final Class<?> bindings)
    {
        return Arrays.stream(bindings.getDeclaredMethods())
            .filter(m -> Modifier.isPublic(m.getModifiers()) && Modifier.isStatic(m.getModifiers()))
            .map(Method::getName)
            .filter(n -> !n.contains("$"))
            .collect(Collectors.toCollection(TreeSet::new));
    }

    static Map<String, Prototype> shimPrototypes() throws IOException
    {
        final Path header = Path.of(System.getProperty("inagg.ffi.header", "src/main/c/inagg_dpdk_shim.h"));
        final String text = Files.readString(header).replaceAll("(?s)/\\*.*?\\*/", "");
        final Map<String, Prototype> prototypes = new LinkedHashMap<>();
        final Matcher m = SHIM_PROTOTYPE.matcher(text);
        while (m.find())
        {
            prototypes.put(m.group(2), prototype(m.group(2), m.group(1), m.group(3), m.group(0).trim()));
        }
        return prototypes;
    }

    private static Prototype prototype(final String name, final String returns, final String params, final String text)
    {
        final List<CType> types = new ArrayList<>();
        for (final String param : params.split(","))
        {
            final String p = param.trim();
            if (p.isEmpty() || p.equals("void"))
            {
                continue;
            }
            // Drop the parameter name: the last identifier, when something precedes it.
            final Matcher named = Pattern.compile("^(.*?[\\s*])(\\w+)$").matcher(p);
            types.add(CType.of(named.matches() && !named.group(1).isBlank() ? named.group(1) : p));
        }
        return new Prototype(name, CType.of(returns),
            types, text.replaceAll("\\s+", " "));
    }

    private static String stripAttributes(final String returns)
    {
        return returns.replaceAll("__rte_\\w+(\\([^)]*\\))?", "").replaceAll("\\b(extern|static|inline)\\b", "")
            .replaceAll("\\s+", " ").trim();
    }

    private static String dpdkSource(final Path include) throws IOException
    {
        final List<String> files = List.of("rte_eal.h", "rte_errno.h", "rte_lcore.h", "rte_dev.h", "rte_mbuf.h",
            "rte_mempool.h", "rte_ethdev.h");
        final StringBuilder all = new StringBuilder();
        for (final String file : files)
        {
            final Optional<Path> path = Optional.of(include.resolve(file)).filter(Files::exists);
            assertThat(path).as("DPDK header %s", file).isPresent();
            all.append(Files.readString(path.get())).append('\n');
        }
        return all.toString()
            .replaceAll("(?s)/\\*.*?\\*/", " ")
            .replaceAll("(?m)^\\s*#.*$", ";")
            .replaceAll("\\s+", " ");
    }
}
