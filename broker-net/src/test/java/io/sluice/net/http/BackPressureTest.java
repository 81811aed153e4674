package io.sluice.net.http;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.Subscription;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.sluice.net.http.HttpTestSupport.await;
import static io.sluice.net.http.HttpTestSupport.client;
import static io.sluice.net.http.HttpTestSupport.json;
import static io.sluice.net.http.HttpTestSupport.post;
import static io.sluice.net.http.HttpTestSupport.readAll;
import static io.sluice.net.http.HttpTestSupport.uri;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Promise: when the bus is full, a produce request waits at most {@code http.max.block.ms} and then answers 503
 * with Retry-After; nothing is dropped silently, and a request that got no room wrote nothing.
 */
class BackPressureTest {
    @TempDir
    Path dataDir;

    @Test
    void aFullRingAnswers503WithRetryAfterOrWaitsWithinTheBoundAndNothingIsLost() throws Exception {
        HttpClient client = client();
        CountDownLatch release = new CountDownLatch(1);
        try (Broker broker = Broker.open(BrokerConfig.builder(dataDir).ringSize(64).build())) {
            broker.createTopic(TopicConfig.of("stalled", 1));
            // a live subscriber that stops consuming holds ring slots: the ring fills up
            Subscription stuck = broker.subscribe("stalled", "stuck", (event, endOfBatch) -> release.await());
            int filled = 0;
            try (Producer producer = broker.newProducer(ProducerConfig.builder().maxBlockMillis(0).build())) {
                while (producer.trySend(ProducerRecord.of("stalled", null, ("\"fill-" + filled + "\"")), null) == Producer.ACCEPTED) {
                    filled++;
                }
            }
            assertThat(filled).isGreaterThan(0).isLessThanOrEqualTo(64);

            try (HttpApiServer impatient = new HttpApiServer(HttpApiConfig.builder().port(0).maxBlockMillis(0).build(), broker);
                 HttpApiServer patient = new HttpApiServer(HttpApiConfig.builder().port(0).maxBlockMillis(30_000).build(), broker)) {
                HttpResponse<String> refused = post(client, impatient, "/v1/topics/stalled/events", "\"rejected\"\n");
                assertThat(refused.statusCode()).isEqualTo(503);
                assertThat(refused.headers().firstValue("retry-after")).hasValue("1");
                assertThat(json(refused).get("code").asText()).isEqualTo("BACK_PRESSURED");
                assertThat(json(refused).get("count").asInt()).isZero();
                assertThat(json(refused).get("message").asText()).startsWith("nothing was written");

                long backPressuredBefore = broker.metrics().partitions().get(0).backPressured();
                CompletableFuture<HttpResponse<String>> waiting = client.sendAsync(HttpRequest.newBuilder(
                                uri(patient, "/v1/topics/stalled/events")).POST(HttpRequest.BodyPublishers.ofString("\"waited\"\n")).build(),
                        HttpResponse.BodyHandlers.ofString());
                await("the patient request to meet the full ring",
                        () -> broker.metrics().partitions().get(0).backPressured() > backPressuredBefore);
                assertThat(waiting).isNotDone();
                release.countDown();

                HttpResponse<String> accepted = waiting.get(30, TimeUnit.SECONDS);
                assertThat(accepted.statusCode()).as(accepted.body()).isEqualTo(200);
                assertThat(json(accepted).get("offsets").get(0).get("offset").asLong()).isEqualTo(filled);
            } finally {
                release.countDown();
                stuck.close();
            }
            int expected = filled + 1;
            await("the journal to catch up", () -> broker.endOffset(new TopicPartition("stalled", 0)) >= expected);
            assertThat(readAll(broker, "stalled", 0)).extracting(ConsumerRecord::valueAsString)
                    .hasSize(filled + 1).doesNotContain("\"rejected\"").endsWith("\"waited\"");
        }
    }

    @Test
    void closingTheListenerAnswersARequestWaitingForRoomWith503AndWritesNothingOfIt() throws Exception {
        HttpClient client = client();
        CountDownLatch release = new CountDownLatch(1);
        try (Broker broker = Broker.open(BrokerConfig.builder(dataDir).ringSize(64).build())) {
            broker.createTopic(TopicConfig.of("stalled", 1));
            Subscription stuck = broker.subscribe("stalled", "stuck", (event, endOfBatch) -> release.await());
            int filled = 0;
            try (Producer producer = broker.newProducer(ProducerConfig.builder().maxBlockMillis(0).build())) {
                while (producer.trySend(ProducerRecord.of("stalled", null, "\"fill\""), null) == Producer.ACCEPTED) {
                    filled++;
                }
            }
            try {
                HttpApiServer patient = new HttpApiServer(HttpApiConfig.builder().port(0).maxBlockMillis(60_000).build(), broker);
                long backPressuredBefore = broker.metrics().partitions().get(0).backPressured();
                CompletableFuture<HttpResponse<String>> waiting = client.sendAsync(HttpRequest.newBuilder(
                                uri(patient, "/v1/topics/stalled/events")).POST(HttpRequest.BodyPublishers.ofString("\"late\"\n")).build(),
                        HttpResponse.BodyHandlers.ofString());
                await("the request to meet the full ring", () -> broker.metrics().partitions().get(0).backPressured() > backPressuredBefore);

                patient.close();

                HttpResponse<String> answer = waiting.get(30, TimeUnit.SECONDS);
                assertThat(answer.statusCode()).isEqualTo(503);
                assertThat(json(answer).get("code").asText()).isEqualTo("CLOSED");
                assertThat(json(answer).get("message").asText()).startsWith("nothing was written");
            } finally {
                release.countDown();
                stuck.close();
            }
            int expected = filled;
            await("the journal to catch up", () -> broker.endOffset(new TopicPartition("stalled", 0)) >= expected);
            assertThat(readAll(broker, "stalled", 0)).extracting(ConsumerRecord::valueAsString)
                    .hasSize(filled).doesNotContain("\"late\"");
        }
    }
}
