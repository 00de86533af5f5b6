package org.inagg.services.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where a service's token comes from, and what is refused. */
class ApiTokenTest
{
    @TempDir
    Path dir;

    @Test
    void shouldReadTheFileBeforeTheEnvironmentAndTrimIt() throws Exception
    {
        final Path file = Files.writeString(dir.resolve("token"), "  from-file\n");

        assertThat(ApiToken.fromFileOrEnvironment(file, Map.of(ApiToken.ENV, "from-env")).authorization())
            .isEqualTo("Bearer from-file");
        assertThat(ApiToken.fromFileOrEnvironment(null, Map.of(ApiToken.ENV, "from-env")).authorization())
            .isEqualTo("Bearer from-env");
        assertThat(ApiToken.fromFileOrEnvironment(null, Map.of()).required()).isFalse();
    }

    @Test
    void shouldNameTheFileThatHoldsNoUsableToken() throws Exception
    {
        final Path empty = Files.writeString(dir.resolve("empty"), "\n");
        final Path spaced = Files.writeString(dir.resolve("spaced"), "two words");

        assertThatIllegalArgumentException().isThrownBy(() -> ApiToken.fromFileOrEnvironment(empty, Map.of()))
            .withMessageContaining("--token-file " + empty).withMessageContaining("empty");
        assertThatIllegalArgumentException().isThrownBy(() -> ApiToken.fromFileOrEnvironment(spaced, Map.of()))
            .withMessageContaining("printable ASCII without spaces");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> ApiToken.fromFileOrEnvironment(dir.resolve("missing"), Map.of()))
            .withMessageContaining("cannot read it");
    }
}
