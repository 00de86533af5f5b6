package org.inagg.p4.bmv2;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The compile cache of {@link Bmv2Program}: its sources, its key, its reuse, and the compiler's refusals. */
class Bmv2ProgramTest
{
    private static final Path SOURCE_TREE = Path.of("src/main/p4");

    @TempDir
    Path temp;

    @Test
    void shouldTakeTheMainFileThenTheGeneratedV1modelFilesFromTheClassPath() throws IOException
    {
        final Map<String, byte[]> sources = Bmv2Program.sources();
        final List<String> generated = new ArrayList<>();
        try (var files = Files.list(SOURCE_TREE.resolve("generated")))
        {
            files.map(file -> "generated/" + file.getFileName())
                .filter(name -> name.startsWith("generated/inagg_v1model_") && name.endsWith(".p4"))
                .sorted()
                .forEach(generated::add);
        }
        final List<String> expected = new ArrayList<>(List.of(Bmv2Program.V1MODEL_MAIN));
        expected.addAll(generated);
        assertThat(sources.keySet()).containsExactlyElementsOf(expected);
        for (final Map.Entry<String, byte[]> source : sources.entrySet())
        {
            assertThat(source.getValue()).as(source.getKey())
                .isEqualTo(Files.readAllBytes(SOURCE_TREE.resolve(source.getKey())));
        }
        final Matcher include = Pattern.compile("#include \"([^\"]+)\"")
            .matcher(new String(sources.get(Bmv2Program.V1MODEL_MAIN), StandardCharsets.UTF_8));
        while (include.find())
        {
            assertThat(sources).containsKey(include.group(1));
        }
    }

    /** The key run-vectors-bmv2.sh computes: SHA-256 of the sources then the version, cut to 16 hex digits. */
    @Test
    void shouldKeyTheCacheAsTheVectorScriptDoes() throws IOException, InterruptedException
    {
        final String version = "p4c-bm2-ss\nVersion 1.2.4.8 (SHA: 32893b7e87 BUILD: Release)\n";
        final Path versionFile = Files.writeString(temp.resolve("version"), version);
        final Process shell = new ProcessBuilder("bash", "-c", "cd " + SOURCE_TREE.toAbsolutePath() + " && { cat"
            + " inagg_v1model.p4; LC_ALL=C ls generated/inagg_v1model_*.p4 | while read -r f; do cat \"$f\"; done;"
            + " cat " + versionFile + "; } | sha256sum | cut -c1-16").redirectErrorStream(true).start();
        final String shellKey = new String(shell.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(shell.waitFor()).isZero();
        assertThat(Bmv2Program.key(Bmv2Program.sources(), version)).isEqualTo(shellKey).hasSize(16);
    }

    @Test
    void shouldCompileOnceAndReuseTheCachedProgram()
    {
        final Path json = Bmv2TestEnvironment.v1modelJson();
        assertThat(json).isRegularFile().hasFileName(json.getFileName().toString());
        assertThat(json.getFileName().toString()).matches("inagg_v1model-[0-9a-f]{16}\\.json");
        final long started = System.nanoTime();
        assertThat(Bmv2Program.v1modelJson(P4Toolchain.locate(), json.getParent())).isEqualTo(json);
        assertThat((System.nanoTime() - started) / 1_000_000_000.0).as("seconds for a cached program").isLessThan(20);
    }

    @Test
    void shouldSayWhatTheCompilerRefused()
    {
        final P4Toolchain toolchain = Bmv2TestEnvironment.assumeToolchain();
        final Map<String, byte[]> sources = Map.of("broken.p4",
            "#include <core.p4>\ncontrol c() { apply { undeclared_thing = 1; } }\n".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> Bmv2Program.compile(toolchain, sources, "broken.p4", temp.resolve("broken.json")))
            .isInstanceOf(Bmv2Exception.class)
            .hasMessageStartingWith("p4c-bm2-ss refused broken.p4 (exit ")
            .hasMessageContaining("undeclared_thing");
        assertThat(temp.resolve("broken.json")).doesNotExist();
    }

    @Test
    void shouldFindTheToolchainOrSayWhereItLooked()
    {
        final String reason = P4Toolchain.unavailableReason();
        if (reason == null)
        {
            assertThat(P4Toolchain.locate().tool(P4Toolchain.SIMPLE_SWITCH)).isExecutable();
            assertThat(P4Toolchain.locate().environment()).containsKeys("PATH", "LD_LIBRARY_PATH", "PYTHONPATH",
                "P4C_16_INCLUDE_PATH");
        }
        else
        {
            assertThat(reason).contains(P4Toolchain.ENV);
        }
        assertThatThrownBy(() -> P4Toolchain.at(temp))
            .isInstanceOf(Bmv2Exception.class)
            .hasMessageContaining("lacks bin/p4c-bm2-ss, bin/simple_switch, bin/simple_switch_CLI");
    }
}
