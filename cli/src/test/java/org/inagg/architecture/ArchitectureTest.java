package org.inagg.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMethod;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.EvaluationResult;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The rules of docs/architecture.md and STYLE.md over the main classes of every module (this module's test class path
 * holds them all): no package cycles inside a module, picocli only in cli, the generated DPDK bindings only behind
 * their wrappers, System.Logger rather than java.util.logging in the libraries, and programs ({@code main}) only in
 * cli and perf.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ArchitectureTest
{
    /** Every Maven module with Java code, libraries first. */
    private static final List<String> MODULES =
        List.of("ffi-bindings", "datapath", "p4", "gpu", "control", "services", "perf", "cli");
    /** The modules whose classes may run as programs: the command line and the benchmark harness. */
    private static final List<String> PROGRAMS = List.of("cli", "perf");

    /** A module's classes in the reactor (MODULE/target/classes) or as its jar (inagg-MODULE-VERSION.jar). */
    private static final Pattern IN_TREE = Pattern.compile("/([a-z0-9-]+)/target/classes/");
    private static final Pattern AS_JAR = Pattern.compile("/inagg-([a-z0-9-]+?)-\\d[^/]*\\.jar!/");

    private static JavaClasses classes;

    @BeforeAll
    static void importEveryModule()
    {
        classes = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .withImportOption(location -> !location.contains("-tests.jar") && !location.contains("/test-classes/"))
            .importPackages("org.inagg");
    }

    /** The module a class was loaded from; "" when it is none of ours. */
    static String moduleOf(final JavaClass javaClass)
    {
        final String uri = javaClass.getSource().map(source -> source.getUri().toString()).orElse("");
        final Matcher tree = IN_TREE.matcher(uri);
        if (tree.find())
        {
            return tree.group(1);
        }
        final Matcher jar = AS_JAR.matcher(uri);
        return jar.find() ? jar.group(1) : "";
    }

    private static DescribedPredicate<JavaClass> inModules(final List<String> modules)
    {
        return DescribedPredicate.describe("in module " + String.join(" or ", modules),
            javaClass -> modules.contains(moduleOf(javaClass)));
    }

    @Test
    void shouldSeeTheClassesOfEveryModule()
    {
        final Map<String, Long> perModule = classes.stream()
            .collect(Collectors.groupingBy(ArchitectureTest::moduleOf, TreeMap::new, Collectors.counting()));
        assertThat(perModule.keySet()).as("modules found (class counts %s)", perModule)
            .containsAll(MODULES).doesNotContain("");
    }

    @Test
    void shouldHaveNoPackageCyclesInsideAModule()
    {
        final List<String> reports = new ArrayList<>();
        for (final String module : MODULES)
        {
            final JavaClasses ofModule = classes.that(inModules(List.of(module)));
            assertThat(ofModule.size()).as(module).isPositive();
            final EvaluationResult result = slices().matching("org.inagg.(**)").namingSlices("$1 (" + module + ")")
                .should().beFreeOfCycles()
                .as("the packages of module " + module + " are free of cycles")
                .evaluate(ofModule);
            if (result.hasViolation())
            {
                reports.add(result.getFailureReport().toString());
            }
        }
        assertThat(reports).as("package cycles").isEmpty();
    }

    @Test
    void shouldUsePicocliOnlyInTheCommandLine()
    {
        noClasses().that(DescribedPredicate.not(inModules(List.of("cli"))))
            .should().dependOnClassesThat().resideInAPackage("picocli..")
            .as("picocli only in module cli")
            .check(classes);
    }

    @Test
    void shouldReachTheGeneratedBindingsOnlyThroughTheirWrappers()
    {
        noClasses().that().resideOutsideOfPackages("org.inagg.ffi.dpdk", "org.inagg.ffi.dpdk.extr..")
            .should().dependOnClassesThat().resideInAPackage("org.inagg.ffi.dpdk.extr..")
            .as("the generated bindings (org.inagg.ffi.dpdk.extr) only through org.inagg.ffi.dpdk")
            .check(classes);
    }

    @Test
    void shouldLogThroughSystemLoggerInTheLibraries()
    {
        noClasses().that(DescribedPredicate.not(inModules(List.of("cli"))))
            .should().dependOnClassesThat().resideInAPackage("java.util.logging..")
            .as("the libraries log through System.Logger; java.util.logging is configured by the command line only")
            .check(classes);
    }

    @Test
    void shouldKeepProgramsOutOfTheLibraries()
    {
        final TreeSet<String> mains = new TreeSet<>();
        for (final JavaClass javaClass : classes.that(DescribedPredicate.not(inModules(PROGRAMS))))
        {
            for (final JavaMethod method : javaClass.getMethods())
            {
                if (method.getName().equals("main") && method.getModifiers().contains(JavaModifier.STATIC)
                    && method.getRawParameterTypes().size() == 1
                    && method.getRawParameterTypes().getFirst().isEquivalentTo(String[].class))
                {
                    mains.add(moduleOf(javaClass) + ": " + javaClass.getName());
                }
            }
        }
        assertThat(mains).as("main methods outside %s (experiment mains belong in perf, commands in cli)", PROGRAMS)
            .isEmpty();
    }
}
