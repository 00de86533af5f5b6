package org.inagg.agent.counters;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.inagg.agent.CounterKey;
import org.inagg.agent.CounterRegistry;
import org.inagg.protocol.WorkerCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PrometheusTextTest
{
    @Test
    void shouldWriteOneFamilyPerMetricWithHelpTypeAndLabels()
    {
        final CounterRegistry registry = new CounterRegistry(8);
        registry.newCounter(WorkerCounter.PACKETS_SENT, "job 1 worker 0: packets sent", 1, 0).setRelease(10);
        registry.newCounter(WorkerCounter.SLOTS_IN_USE, "job 1 worker 0: slots in use", 1, 0).setRelease(3);
        registry.newCounter(WorkerCounter.PACKETS_SENT, "job 1 worker 1: packets sent", 1, 1).setRelease(12);
        registry.newCounter("a \"quoted\\\" label\nwith a newline", 77).setRelease(1);
        final Map<String, String> labels = new LinkedHashMap<>();
        labels.put("role", "local");
        labels.put("pid", "4242");

        final String text = PrometheusText.format(CountersSnapshot.take(registry.reader()), labels);

        assertThat(text).isEqualTo("""
            # HELP inagg_worker_packets_sent_total packets sent (type 101)
            # TYPE inagg_worker_packets_sent_total counter
            inagg_worker_packets_sent_total{role="local",pid="4242",job="1",worker="0"} 10
            inagg_worker_packets_sent_total{role="local",pid="4242",job="1",worker="1"} 12
            # HELP inagg_worker_slots_in_use slots in use (type 109)
            # TYPE inagg_worker_slots_in_use gauge
            inagg_worker_slots_in_use{role="local",pid="4242",job="1",worker="0"} 3
            # HELP inagg_counter_77_total a "quoted\\\\" label\\nwith a newline (type 77)
            # TYPE inagg_counter_77_total counter
            inagg_counter_77_total{role="local",pid="4242"} 1
            """);
    }

    @Test
    void shouldSumCountersOfOneFamilyAndLabelsIntoOneSampleAsAShardedSwitchsShardsCountApart()
    {
        final CounterRegistry registry = new CounterRegistry(16);
        registry.newCounter(WorkerCounter.PACKETS_SENT, "shard 0: packets sent", 1, 0).setRelease(10);
        registry.newCounter(WorkerCounter.PACKETS_SENT, "shard 1: packets sent", 1, 0).setRelease(32);
        registry.newCounter(WorkerCounter.PACKETS_SENT, "shard 1: packets sent", 2, 0).setRelease(5);
        registry.newCounter(WorkerCounter.PACKETS_SENT, "shard 0: no job, no worker", CounterKey.NONE, CounterKey.NONE)
            .setRelease(100);
        registry.newCounter(WorkerCounter.PACKETS_SENT, "shard 1: no job, no worker", CounterKey.NONE, CounterKey.NONE)
            .setRelease(200);
        registry.newCounter(WorkerCounter.PACKETS_SENT, "job 1, no worker", 1, CounterKey.NONE).setRelease(7);
        registry.newCounter(WorkerCounter.PACKETS_SENT, "no job, worker 0", CounterKey.NONE, 0).setRelease(9);

        final String text = PrometheusText.format(CountersSnapshot.take(registry.reader()), Map.of("role", "switch"));

        assertThat(text).contains("inagg_worker_packets_sent_total{role=\"switch\",job=\"1\",worker=\"0\"} 42\n")
            .contains("inagg_worker_packets_sent_total{role=\"switch\",job=\"2\",worker=\"0\"} 5\n")
            .contains("inagg_worker_packets_sent_total{role=\"switch\"} 300\n")
            .contains("inagg_worker_packets_sent_total{role=\"switch\",job=\"1\"} 7\n")
            .contains("inagg_worker_packets_sent_total{role=\"switch\",worker=\"0\"} 9\n");
        assertThat(text.lines().filter(line -> line.startsWith("inagg_worker_packets_sent_total{"))).hasSize(5);
    }

    @Test
    void shouldServeTheCountersAtMetricsAndNothingElse() throws IOException, InterruptedException
    {
        final CounterRegistry registry = new CounterRegistry(8);
        registry.newCounter(WorkerCounter.RETRANSMISSIONS, "job 3 worker 2: retransmissions", 3, 2).setRelease(5);
        try (MetricsServer server = MetricsServer.start(new InetSocketAddress("127.0.0.1", 0), registry.reader(),
            MetricsServer.processLabels("worker")))
        {
            final HttpClient client = HttpClient.newHttpClient();
            final URI base = URI.create("http://127.0.0.1:" + server.port());
            final HttpResponse<String> metrics = client.send(HttpRequest.newBuilder(base.resolve("/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(metrics.headers().firstValue("Content-Type")).contains(PrometheusText.CONTENT_TYPE);
            assertThat(metrics.body()).contains("# TYPE inagg_worker_retransmissions_total counter\n")
                .contains("inagg_worker_retransmissions_total{role=\"worker\",pid=\"" + ProcessHandle.current().pid()
                    + "\",job=\"3\",worker=\"2\"} 5\n");

            assertThat(client.send(HttpRequest.newBuilder(base.resolve("/other")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(404);
            assertThat(client.send(HttpRequest.newBuilder(base.resolve("/metrics"))
                .POST(HttpRequest.BodyPublishers.ofString("x")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(405);
        }
    }
}
