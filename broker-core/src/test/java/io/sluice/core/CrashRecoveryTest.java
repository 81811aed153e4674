package io.sluice.core;

import io.sluice.testkit.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The durability promise of {@link Acks#JOURNAL}: an event whose send was acknowledged survives SIGKILL of the
 * broker process, at the offset it was acknowledged with, and offsets stay dense after the restart; a group's
 * committed offsets survive as well, and its members resume from them.
 */
class CrashRecoveryTest {
    @TempDir
    Path dir;

    /** Child process: opens a broker, produces forever, prints "ack partition offset value" for each acknowledgement. */
    public static final class CrashingProducer {
        public static void main(String[] args) throws Exception {
            Broker broker = Broker.open(BrokerConfig.builder(Path.of(args[0])).build());
            broker.createTopicIfAbsent(TopicConfig.of("crash", 2));
            Producer producer = broker.newProducer(ProducerConfig.DEFAULT);
            int start = Integer.parseInt(args[1]);
            Thread committer = new Thread(() -> {
                try (Consumer c = broker.newConsumer(ConsumerConfig.builder().groupId("auditors")
                        .offsetReset(OffsetReset.EARLIEST).maxPollRecords(1000).build())) {
                    c.subscribe("crash");
                    while (true) {
                        if (!c.poll(Duration.ofMillis(100)).isEmpty()) {
                            c.commitSync();
                            for (TopicPartition tp : c.assignment()) {
                                synchronized (System.out) {
                                    System.out.println("commit " + tp.partition() + " " + c.position(tp));
                                }
                            }
                        }
                    }
                }
            }, "committer");
            committer.setDaemon(true);
            committer.start();
            System.out.println("ready");
            System.out.flush();
            for (int i = start; ; i++) {
                final int n = i;
                producer.send(ProducerRecord.of("crash", null, "event-" + n).withPartition(n % 2), (p, offset, error) -> {
                    if (error == null) {
                        synchronized (System.out) {
                            System.out.println("ack " + p + " " + offset + " event-" + n);
                        }
                    }
                });
            }
        }
    }

    @Test
    void everyAcknowledgedEventSurvivesRepeatedSigkills() throws Exception {
        Map<String, String> acked = new HashMap<>(); // "p/offset" -> value
        long[] lastCommitted = new long[2];
        int start = 0;
        for (int round = 0; round < 3; round++) {
            try (ChildJvm child = ChildJvm.start(CrashingProducer.class, dir.toString(), Integer.toString(start))) {
                assertThat(child.readLine()).isEqualTo("ready");
                int seen = 0;
                String line;
                while (seen < 20_000 && (line = child.readLine()) != null) {
                    String[] f = line.split(" ");
                    if (f[0].equals("commit")) {
                        int p = Integer.parseInt(f[1]);
                        lastCommitted[p] = Math.max(lastCommitted[p], Long.parseLong(f[2]));
                        continue;
                    }
                    acked.put(f[1] + "/" + f[2], f[3]);
                    seen++;
                }
                child.kill();
            }
            start += 1_000_000;
        }
        assertThat(acked).hasSizeGreaterThanOrEqualTo(60_000);

        try (Broker broker = Broker.open(BrokerConfig.builder(dir).build());
             Consumer consumer = broker.newConsumer(ConsumerConfig.builder().offsetReset(OffsetReset.EARLIEST).maxPollRecords(10_000).build())) {
            consumer.assign(broker.partitionsOf("crash"));
            Map<String, String> stored = new HashMap<>();
            long[] expectedNext = new long[2];
            long total = broker.describeTopic("crash").partitions().stream().mapToLong(TopicDescription.PartitionInfo::endOffset).sum();
            while (stored.size() < total) {
                for (ConsumerRecord r : consumer.poll(Duration.ofSeconds(5))) {
                    assertThat(r.offset()).as("dense offsets in partition %d", r.partition()).isEqualTo(expectedNext[r.partition()]);
                    expectedNext[r.partition()]++;
                    stored.put(r.partition() + "/" + r.offset(), r.valueAsString());
                }
            }
            for (Map.Entry<String, String> e : acked.entrySet()) {
                assertThat(stored.get(e.getKey())).as("acknowledged event at %s", e.getKey()).isEqualTo(e.getValue());
            }
            assertThat(consumer.assignment()).isEqualTo(Set.copyOf(broker.partitionsOf("crash")));
            // committed offsets survive too, and a restarted group member resumes exactly there
            for (int p = 0; p < 2; p++) {
                TopicPartition tp = new TopicPartition("crash", p);
                assertThat(lastCommitted[p]).isPositive();
                assertThat(broker.groups().committed("auditors", tp).orElseThrow()).isGreaterThanOrEqualTo(lastCommitted[p]);
            }
            try (Consumer resumed = broker.newConsumer(ConsumerConfig.builder().groupId("auditors").build())) {
                resumed.subscribe("crash");
                for (TopicPartition tp : resumed.assignment()) {
                    assertThat(resumed.position(tp)).isEqualTo(broker.groups().committed("auditors", tp).orElseThrow());
                }
            }
        }
    }
}
