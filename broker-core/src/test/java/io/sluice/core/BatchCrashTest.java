package io.sluice.core;

import io.sluice.core.internal.BrokerFront;
import io.sluice.core.internal.journal.PartitionJournal;
import io.sluice.records.RecordBatchReader;
import io.sluice.testkit.ChildJvm;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SIGKILL while the journal writer is inside a record batch: big events sent as fast as the ring takes them keep the
 * writer in large (up to 64 KiB) batches most of the time. After the restart every acknowledged event is there at its
 * acknowledged offset, offsets are dense, every stored batch passes its CRC, and the batch being written at the kill
 * left nothing visible. Twice: events sent one ring slot each (the journal writer coalesces them), and sent by a
 * batching embedded producer ({@code lingerMicros} above 0: its batches cross the ring whole).
 */
class BatchCrashTest {
    @TempDir
    Path dir;

    /**
     * Child process: produces 2 KiB events with keys and headers forever; prints "ack offset n" per acknowledgement.
     * A third argument "batching" makes the producer batch (linger 1 ms, 64 KiB batches).
     */
    public static final class BatchingProducer {
        public static void main(String[] args) {
            Broker broker = Broker.open(BrokerConfig.builder(Path.of(args[0])).build());
            broker.createTopicIfAbsent(TopicConfig.of("batches", 1));
            boolean batching = args.length > 2 && args[2].equals("batching");
            Producer producer = broker.newProducer(batching ? ProducerConfig.builder().lingerMicros(1_000).build() : ProducerConfig.DEFAULT);
            long start = Long.parseLong(args[1]);
            System.out.println("ready");
            System.out.flush();
            for (long i = start; ; i++) {
                final long n = i;
                ProducerRecord record = new ProducerRecord("batches", 0, ("key-" + n).getBytes(), value(n),
                        List.of(Header.of("n", Long.toString(n))), ProducerRecord.NO_TIMESTAMP);
                producer.send(record, (p, offset, error) -> {
                    if (error == null) {
                        synchronized (System.out) {
                            System.out.println("ack " + offset + " " + n);
                        }
                    }
                });
            }
        }
    }

    static byte[] value(long n) {
        byte[] v = new byte[2048];
        for (int i = 0; i < v.length; i++) {
            v[i] = (byte) (n + i);
        }
        return v;
    }

    @Test
    void aSigkillInTheMiddleOfBatchAppendsLosesNoAcknowledgedEventAndLeavesNoPartialBatch() throws Exception {
        sigkillTwiceThenCheck("per-event");
    }

    @Test
    void aSigkillWhileAnEmbeddedProducerSendsWholeBatchesLosesNoAcknowledgedEventAndLeavesNoPartialBatch() throws Exception {
        sigkillTwiceThenCheck("batching");
    }

    private void sigkillTwiceThenCheck(String producerMode) throws Exception {
        Map<Long, Long> acked = new HashMap<>(); // offset -> n
        long start = 0;
        for (int round = 0; round < 2; round++) {
            try (ChildJvm child = ChildJvm.start(BatchingProducer.class, dir.toString(), Long.toString(start), producerMode)) {
                assertThat(child.readLine()).isEqualTo("ready");
                int seen = 0;
                String line;
                while (seen < 20_000 && (line = child.readLine()) != null) {
                    String[] f = line.split(" ");
                    acked.put(Long.parseLong(f[1]), Long.parseLong(f[2]));
                    seen++;
                }
                child.kill();
            }
            start += 1_000_000_000L;
        }
        assertThat(acked).hasSizeGreaterThanOrEqualTo(40_000);

        long end;
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).build());
             PartitionReader reader = BrokerFront.of(broker).openReader(new TopicPartition("batches", 0))) {
            end = broker.describeTopic("batches").partitions().get(0).endOffset();
            long expected = 0;
            int matched = 0;
            while (expected < end) {
                int n = reader.read(5_000, 64 << 20, r -> {
                    Long sent = acked.get(r.offset());
                    if (sent != null) {
                        assertThat(r.key()).isEqualTo(("key-" + sent).getBytes());
                        assertThat(r.value()).isEqualTo(value(sent));
                        assertThat(r.headers()).containsExactly(Header.of("n", Long.toString(sent)));
                    }
                });
                assertThat(n).isPositive();
                expected += n;
                assertThat(reader.position()).as("dense offsets").isEqualTo(expected);
            }
            for (long offset : acked.keySet()) {
                assertThat(offset).as("acknowledged offset below the recovered end").isLessThan(end);
                matched++;
            }
            assertThat(matched).isEqualTo(acked.size());
        }

        // the stored batches themselves: each passes its CRC, base offsets are dense, the last one ends at the end offset
        RecordBatchReader cursor = new RecordBatchReader();
        long next = 0;
        int batches = 0;
        int multiRecord = 0;
        try (SingleChronicleQueue q = SingleChronicleQueueBuilder.binary(dir.resolve("topics/batches/0")).build();
             ExcerptTailer tailer = q.createTailer()) {
            while (true) {
                try (DocumentContext dc = tailer.readingDocument()) {
                    if (!dc.isPresent()) {
                        break;
                    }
                    if (dc.isMetaData()) {
                        continue;
                    }
                    Bytes<?> in = dc.wire().bytes();
                    byte[] stored = new byte[(int) in.readRemaining()];
                    in.read(in.readPosition(), stored, 0, stored.length);
                    cursor.open(java.nio.ByteBuffer.wrap(stored), 0, stored.length, true); // throws if damaged
                    assertThat(cursor.baseOffset()).isEqualTo(next);
                    // the journal writer's own batches stay within its bound; a producer's batch is published once it
                    // holds ProducerConfig's 64 KiB, so it may end one record (a 2 KiB value, its key and header) past it
                    assertThat(in.readRemaining()).isLessThanOrEqualTo(PartitionJournal.DEFAULT_MAX_BATCH_BYTES + 4096);
                    next = cursor.nextOffset();
                    batches++;
                    if (cursor.recordCount() > 1) {
                        multiRecord++;
                    }
                }
            }
        }
        assertThat(next).isEqualTo(end);
        assertThat(multiRecord).as("ring batches coalesced into multi-record journal batches").isPositive();
    }
}
