package org.inagg.services.cli;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;

import org.inagg.p4.softswitch.SwitchJobConfig;
import org.inagg.services.softswitch.Admission;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** {@code switch --source JOB:WORKER=HOST:PORT} and admission by default ({@code --open} for labs). */
class SourceOptionTest
{
    private static final List<SwitchJobConfig> JOBS = List.of(new SwitchJobConfig(1, 2), new SwitchJobConfig(7, 1));

    @Test
    void shouldReadEachWorkersSourceByJob()
    {
        final Map<Integer, InetSocketAddress[]> sources = SwitchCommand.parseSources(
            List.of("1:1=127.0.0.1:9102", "1:0=127.0.0.1:9101", "7:0=10.0.0.7:9000"), JOBS);

        assertThat(sources.get(1)).containsExactly(new InetSocketAddress("127.0.0.1", 9101),
            new InetSocketAddress("127.0.0.1", 9102));
        assertThat(sources.get(7)).containsExactly(new InetSocketAddress("10.0.0.7", 9000));
        assertThatCode(() -> Admission.check(JOBS, sources, false, null))
            .doesNotThrowAnyException();
    }

    @Test
    void shouldNameWhatIsWrongWithASource()
    {
        assertThatIllegalArgumentException().isThrownBy(() -> SwitchCommand.parseSources(List.of("1=h:1"), JOBS))
            .withMessageContaining("JOB:WORKER=HOST:PORT").withMessageContaining("'1=h:1'");
        assertThatIllegalArgumentException().isThrownBy(() -> SwitchCommand.parseSources(List.of("1:x=h:1"), JOBS))
            .withMessageContaining("'1:x=h:1'");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> SwitchCommand.parseSources(List.of("3:0=127.0.0.1:1"), JOBS))
            .withMessageContaining("job 3, which no --job gives");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> SwitchCommand.parseSources(List.of("1:2=127.0.0.1:1"), JOBS))
            .withMessageContaining("job 1 has workers 0..1");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> SwitchCommand.parseSources(List.of("1:0=127.0.0.1:1", "1:0=127.0.0.1:2"), JOBS))
            .withMessageContaining("worker 0 of job 1 twice");
    }

    @Test
    void shouldRefuseAJobWithoutSourcesUnlessOpen()
    {
        final Map<Integer, InetSocketAddress[]> none = Map.of();

        assertThatIllegalArgumentException()
            .isThrownBy(() -> Admission.check(JOBS, none, false, null))
            .withMessageContaining("job 1 has no registered sources").withMessageContaining("--open")
            .withMessageContaining("--source 1:WORKER=HOST:PORT");
        assertThatCode(() -> Admission.check(JOBS, none, true, null)).doesNotThrowAnyException();
    }

    @Test
    void shouldRefuseSomeWorkersSourcesWithoutTheOthers()
    {
        final Map<Integer, InetSocketAddress[]> partial = SwitchCommand.parseSources(List.of("1:0=127.0.0.1:9101"),
            JOBS);

        // --open does not excuse a half-registered job: worker 1 would be learned while worker 0 is pinned.
        assertThatIllegalArgumentException()
            .isThrownBy(() -> Admission.check(JOBS, partial, true, null))
            .withMessageContaining("not those of worker(s) [1]");
    }

    @Test
    void shouldRegisterTheLocalWorkersSourcesOfAnUpstreamSwitchSecurity()
    {
        // Issue 24: --upstream used to force --open (anyone could join or restart its workers); now the sources of
        // the workers it serves are registered, and only those.
        final List<SwitchJobConfig> jobs = List.of(new SwitchJobConfig(1, 4));
        final int[] local = {1, 2};
        final Map<Integer, InetSocketAddress[]> localSources = SwitchCommand.parseSources(
            List.of("1:1=127.0.0.1:9101", "1:2=127.0.0.1:9102"), jobs);
        assertThatCode(() -> Admission.check(jobs, localSources, false, local))
            .doesNotThrowAnyException();
        assertThatIllegalArgumentException().isThrownBy(() -> Admission.check(jobs,
                SwitchCommand.parseSources(List.of("1:1=127.0.0.1:9101"), jobs), false, local))
            .withMessageContaining("not those of worker(s) [2]");
        assertThatIllegalArgumentException().isThrownBy(() -> Admission.check(jobs,
                SwitchCommand.parseSources(List.of("1:1=127.0.0.1:9101", "1:2=127.0.0.1:9102", "1:3=127.0.0.1:9103"),
                    jobs), false, local))
            .withMessageContaining("worker(s) [3], which this switch does not serve");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> Admission.check(jobs, Map.of(), false, local))
            .withMessageContaining("job 1 has no registered sources");
    }
}
