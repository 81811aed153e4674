package io.sluice.bench;

import io.sluice.bench.internal.AllocatedBytes;
import io.sluice.bench.internal.TempDir;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicConfig;
import io.sluice.net.client.ClientConfig;
import io.sluice.net.client.RemoteProducer;
import io.sluice.net.client.RemoteProducerConfig;
import io.sluice.net.server.BrokerServer;
import io.sluice.net.server.BrokerServerConfig;

import java.nio.file.Path;
import java.util.List;

/**
 * What a network produce allocates per record: rounds of one {@link RemoteProducer} (acks=journal, default batching)
 * sending {@code records} × 100 B events (one record object, reused) to a broker with one journaled partition through
 * {@link BrokerServer} with one event loop. For each round it prints the bytes allocated per record by the broker's
 * event loop ({@code sluice-broker-io-*}: decoding and checking PRODUCE v1 batches, handing them to the ring,
 * answering), the partition's journal writer ({@code sluice-journal-*}), the producer's I/O thread and the sending
 * thread (which encodes the records into batches), from {@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes}.
 * The first round includes warm-up; compare the later ones.
 *
 * <pre>java $(cat bench-harness/target/jvm.options) -cp bench-harness/target/sluice-bench.jar io.sluice.bench.ProduceAllocation [records] [rounds]</pre>
 */
public final class ProduceAllocation {
    private ProduceAllocation() {
    }

    public static void main(String[] args) throws Exception {
        int records = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        String topic = "alloc";
        try (TempDir dir = new TempDir(Path.of(System.getProperty("java.io.tmpdir")), "sluice-produce-alloc");
             Broker broker = Broker.open(BrokerConfig.builder(dir.resolve("broker")).build())) {
            broker.createTopic(TopicConfig.of(topic, 1));
            BrokerServer server = BrokerServer.start(broker, BrokerServerConfig.builder().bindAddress("127.0.0.1").port(0)
                    .ioThreads(1).build());
            try {
                ProducerRecord record = new ProducerRecord(topic, 0, null, new byte[100], List.of(), ProducerRecord.NO_TIMESTAMP);
                String clientId = "alloc";
                RemoteProducerConfig config = RemoteProducerConfig.builder(ClientConfig.builder("127.0.0.1:" + server.port())
                        .clientId(clientId).build()).producer(ProducerConfig.DEFAULT).build();
                try (RemoteProducer producer = new RemoteProducer(config)) {
                    for (int round = 0; round < rounds; round++) {
                        long serverBefore = AllocatedBytes.byThreadsNamed("sluice-broker-io");
                        long journalBefore = AllocatedBytes.byThreadsNamed("sluice-journal");
                        long clientIoBefore = AllocatedBytes.byThreadsNamed("sluice-producer-" + clientId);
                        long senderBefore = AllocatedBytes.byCurrentThread();
                        long t0 = System.nanoTime();
                        for (int i = 0; i < records; i++) {
                            producer.send(record, (p, offset, error) -> {
                                if (error != null) {
                                    throw new IllegalStateException(error);
                                }
                            });
                        }
                        producer.flush();
                        double seconds = (System.nanoTime() - t0) / 1e9;
                        long senderBytes = AllocatedBytes.byCurrentThread() - senderBefore;
                        long clientIo = AllocatedBytes.byThreadsNamed("sluice-producer-" + clientId) - clientIoBefore;
                        long serverBytes = AllocatedBytes.byThreadsNamed("sluice-broker-io") - serverBefore;
                        long journalBytes = AllocatedBytes.byThreadsNamed("sluice-journal") - journalBefore;
                        System.out.printf("round %d: %d records in %.2f s; allocated per record: broker event loop %.1f B, "
                                        + "journal writer %.1f B, producer I/O thread %.1f B, sending thread %.1f B%n", round,
                                records, seconds, (double) serverBytes / records, (double) journalBytes / records,
                                (double) clientIo / records, (double) senderBytes / records);
                    }
                }
            } finally {
                server.close();
            }
        }
    }
}
