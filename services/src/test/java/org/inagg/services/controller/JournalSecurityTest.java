package org.inagg.services.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

import org.inagg.services.http.JsonHttp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 24: the controller's journal holds the ranks' JOIN credentials, so only the controller's user may read it. */
class JournalSecurityTest
{
    @TempDir
    Path dir;

    @Test
    void shouldKeepTheJournalPrivateToTheControllersUserAlsoAfterACompaction() throws Exception
    {
        final Path path = dir.resolve("controller.journal");
        Files.createFile(path, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--")));
        try (Journal journal = Journal.open(path))
        {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(path))).isEqualTo("rw-------");
            journal.compact(List.of(JsonHttp.MAPPER.createObjectNode().put("type", "freed").put("name", "")));
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(path))).isEqualTo("rw-------");
        }
    }
}
