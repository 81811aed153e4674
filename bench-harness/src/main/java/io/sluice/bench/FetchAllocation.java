package io.sluice.bench;

import io.sluice.bench.internal.AllocatedBytes;
import io.sluice.bench.internal.TempDir;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.OffsetReset;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.core.TopicPartition;
import io.sluice.net.client.ClientConfig;
import io.sluice.net.client.RemoteConsumer;
import io.sluice.net.server.BrokerServer;
import io.sluice.net.server.BrokerServerConfig;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * What a network fetch allocates per record: a broker with one journaled partition of {@code records} × 100 B
 * events (written by the embedded producer), then rounds of a {@link RemoteConsumer} reading all of them from the
 * beginning through {@link BrokerServer} with one event loop. For each round it prints the bytes allocated per record
 * by the broker's event loop ({@code sluice-broker-io-*}: the fetch path on the server), by the consumer's I/O thread
 * (decoding) and by the polling thread, from {@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes}. The
 * first round includes warm-up; compare the later ones.
 *
 * <pre>java $(cat bench-harness/target/jvm.options) -cp bench-harness/target/sluice-bench.jar io.sluice.bench.FetchAllocation [records] [rounds]</pre>
 */
public final class FetchAllocation {
    private FetchAllocation() {
    }

    public static void main(String[] args) throws Exception {
        int records = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        TopicPartition tp = new TopicPartition("alloc", 0);
        try (TempDir dir = new TempDir(Path.of(System.getProperty("java.io.tmpdir")), "sluice-fetch-alloc");
             Broker broker = Broker.open(BrokerConfig.builder(dir.resolve("broker")).build())) {
            broker.createTopic(TopicConfig.of(tp.topic(), 1));
            byte[] value = new byte[100];
            try (Producer producer = broker.newProducer(ProducerConfig.DEFAULT)) {
                for (int i = 0; i < records; i++) {
                    producer.send(new ProducerRecord(tp.topic(), 0, null, value, List.of(), ProducerRecord.NO_TIMESTAMP));
                }
                producer.flush();
            }
            BrokerServer server = BrokerServer.start(broker, BrokerServerConfig.builder().bindAddress("127.0.0.1").port(0)
                    .ioThreads(1).build());
            try {
                for (int round = 0; round < rounds; round++) {
                    String clientId = "alloc-" + round;
                    ConsumerConfig config = ConsumerConfig.builder().clientId(clientId).offsetReset(OffsetReset.EARLIEST)
                            .maxPollRecords(10_000).maxPollBytes(1 << 20).build();
                    long serverBefore = AllocatedBytes.byThreadsNamed("sluice-broker-io");
                    long pollerBefore = AllocatedBytes.byCurrentThread();
                    long received = 0;
                    long clientIo;
                    long t0 = System.nanoTime();
                    try (RemoteConsumer consumer = new RemoteConsumer(ClientConfig.builder("127.0.0.1:" + server.port())
                            .clientId(clientId).build(), config)) {
                        long clientIoBefore = AllocatedBytes.byThreadsNamed("sluice-consumer-" + clientId);
                        consumer.assign(Set.of(tp));
                        while (received < records) {
                            received += consumer.poll(Duration.ofMillis(500)).size();
                        }
                        clientIo = AllocatedBytes.byThreadsNamed("sluice-consumer-" + clientId) - clientIoBefore;
                    }
                    double seconds = (System.nanoTime() - t0) / 1e9;
                    long serverBytes = AllocatedBytes.byThreadsNamed("sluice-broker-io") - serverBefore;
                    long pollerBytes = AllocatedBytes.byCurrentThread() - pollerBefore;
                    System.out.printf("round %d: %d records in %.2f s; allocated per record: broker event loop %.1f B, "
                                    + "consumer I/O thread %.1f B, polling thread %.1f B%n", round, received, seconds,
                            (double) serverBytes / received, (double) clientIo / received, (double) pollerBytes / received);
                }
            } finally {
                server.close();
            }
        }
    }
}
