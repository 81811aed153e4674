package io.sluice.bench.scenario;

import io.sluice.bench.internal.Latency;
import io.sluice.core.Acks;
import io.sluice.core.Broker;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.OffsetReset;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.TopicPartition;
import io.sluice.net.client.ClientConfig;
import io.sluice.net.client.RemoteConsumer;
import io.sluice.net.client.RemoteProducer;
import io.sluice.net.client.RemoteProducerConfig;
import io.sluice.net.client.SyncProducer;
import io.sluice.net.server.BrokerServer;
import io.sluice.net.server.BrokerServerConfig;
import org.HdrHistogram.Histogram;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The network round-trip loads through Sluice's Netty broker ({@code BrokerServer} on 127.0.0.1, port 0) and its Java
 * client, in the same JVM as the clients — as the reference ran its server and clients on one machine.
 */
final class SluiceNetLoads implements AutoCloseable {
    private final BrokerServer server;
    private final String bootstrap;

    SluiceNetLoads(Broker broker) {
        this.server = BrokerServer.start(broker, BrokerServerConfig.builder().bindAddress("127.0.0.1").port(0).build());
        this.bootstrap = "127.0.0.1:" + server.port();
    }

    String transport() {
        return server.transport();
    }

    /** Which Java client a sync produce load uses. */
    enum Client {
        /** {@code RemoteProducer}: the caller hands its record to the client's event loop, which completes its future. */
        REMOTE,
        /** {@code SyncProducer}: the caller writes its request and reads the answer itself. */
        CALLER_THREAD
    }

    /** A client producer that sends each record at once (linger 0) with acks=JOURNAL. */
    Producer producer(Client client, String clientId) {
        ClientConfig config = ClientConfig.builder(bootstrap).clientId(clientId).build();
        ProducerConfig producer = ProducerConfig.builder().acks(Acks.JOURNAL).build();
        return switch (client) {
            case REMOTE -> new RemoteProducer(RemoteProducerConfig.builder(config).producer(producer).lingerMicros(0).build());
            case CALLER_THREAD -> new SyncProducer(config, producer);
        };
    }

    /**
     * {@code clients} client connections, each on its own thread doing {@code perClient} synchronous produce round
     * trips ({@code send(record).get()}: request, journal append, acknowledgement).
     */
    Run syncProduce(Client client, String topic, int clients, int perClient, byte[] value) throws Exception {
        Histogram[] hs = new Histogram[clients];
        List<Thread> threads = new ArrayList<>();
        List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
        CountDownLatch ready = new CountDownLatch(clients);
        CountDownLatch go = new CountDownLatch(1);
        ProducerRecord record = new ProducerRecord(topic, 0, null, value, List.of(), ProducerRecord.NO_TIMESTAMP);
        DeliveryLedger ledger = new DeliveryLedger(clients * perClient);
        for (int c = 0; c < clients; c++) {
            Histogram h = Latency.newHistogram();
            hs[c] = h;
            String id = "bench-net-" + c;
            Thread t = new Thread(() -> {
                try (Producer p = producer(client, id)) {
                    p.send(record).get(30, TimeUnit.SECONDS); // connect and learn the topic before the clock starts
                    ready.countDown();
                    go.await();
                    for (int i = 0; i < perClient; i++) {
                        long t0 = System.nanoTime();
                        io.sluice.core.RecordMetadata md = p.send(record).get(30, TimeUnit.SECONDS);
                        Latency.record(h, System.nanoTime() - t0);
                        ledger.record(md.partition(), md.offset());
                    }
                } catch (Exception e) {
                    errors.add(e);
                    ready.countDown();
                }
            }, id);
            threads.add(t);
            t.start();
        }
        ready.await();
        long start = System.nanoTime();
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        long nanos = System.nanoTime() - start;
        if (!errors.isEmpty()) {
            throw new IllegalStateException("a network producer failed", errors.get(0));
        }
        ledger.verify("acknowledged network produce requests", (long) clients * perClient);
        return new Run((long) clients * perClient, nanos, Latency.merge(hs));
    }

    /** Upper bound of the framing around one record in a stored batch of one (Kafka v2 record varints + attributes). */
    static final int RECORD_FRAMING_BYTES = 20;

    /**
     * A fetch's byte limit that holds {@code records} records of {@code valueSize} bytes even when each is stored as a
     * batch of its own (the sync produce runs that fill the topic send one record per request, and a fetch ships stored
     * batches whole): {@code records × (batch header + record framing + valueSize)}.
     */
    static int fetchMaxBytes(int records, int valueSize) {
        return records * (io.sluice.records.RecordBatch.HEADER_SIZE + RECORD_FRAMING_BYTES + valueSize);
    }

    /**
     * {@code fetches} fetch round trips of {@code records} records each at random offsets of a partition: {@code seek}
     * then polls until those {@code records} records arrived (maxPollRecords = records, maxPollBytes =
     * {@link #fetchMaxBytes}: one fetch when the records are stored one per batch, as the sync produce runs store them;
     * a second round trip, the consumer's prefetch, when the stored batch holding the offset is larger and ends first).
     */
    Run fetch(Broker broker, TopicPartition tp, int fetches, int records, int valueSize, long seed) {
        Histogram h = Latency.newHistogram();
        try (RemoteConsumer c = new RemoteConsumer(ClientConfig.builder(bootstrap).clientId("bench-fetch").build(),
                ConsumerConfig.builder().clientId("bench-fetch").offsetReset(OffsetReset.EARLIEST)
                        .maxPollRecords(records).maxPollBytes(fetchMaxBytes(records, valueSize)).build())) {
            c.assign(Set.of(tp));
            long first = broker.startOffset(tp);
            long end = broker.endOffset(tp);
            if (end - first < records) {
                throw new IllegalStateException(tp + " holds " + (end - first) + " records, fewer than one fetch of " + records);
            }
            SplittableRandom random = new SplittableRandom(seed);
            long start = System.nanoTime();
            for (int i = 0; i < fetches; i++) {
                long offset = random.nextLong(first, end - records + 1);
                c.seek(tp, offset);
                long t0 = System.nanoTime();
                // FETCH ships whole stored batches: the batch holding the offset may end before `records` records
                // (then a second round trip, already in flight as the consumer's prefetch, brings the rest)
                List<ConsumerRecord> got = new ArrayList<>(records);
                long deadline = t0 + TimeUnit.SECONDS.toNanos(5);
                while (got.size() < records && System.nanoTime() - deadline < 0) {
                    List<ConsumerRecord> more = c.poll(Duration.ofSeconds(5));
                    got.addAll(more.subList(0, Math.min(more.size(), records - got.size())));
                }
                Latency.record(h, System.nanoTime() - t0);
                if (got.size() != records || got.get(0).offset() != offset || got.get(records - 1).offset() != offset + records - 1) {
                    throw new IllegalStateException("fetch of " + records + " at " + offset + " returned " + got.size()
                            + " records" + (got.isEmpty() ? "" : " from offset " + got.get(0).offset()));
                }
            }
            return new Run(fetches, System.nanoTime() - start, h);
        }
    }

    @Override
    public void close() {
        server.close();
    }
}
