package io.sluice.core;

import io.sluice.testkit.Await;
import io.sluice.testkit.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SIGKILL of a broker process around a roll of the journal's cycle: the child runs a clock 600 times faster than real
 * time with five-minute cycles (a roll every half second), prints each roll as it happens, and the test kills it
 * right after one. Every acknowledged event (acks JOURNAL on partition 0, SYNC on partition 1) must be there at its
 * offset after the restart, offsets dense, and the next process must continue them.
 */
class CrashAroundRollTest {
    static final long CYCLE_MILLIS = TimeUnit.MINUTES.toMillis(5);
    static final long SPEED = 600;
    /** on a cycle boundary; each round starts a day later so cycles only move forward */
    static final long T0 = 1_699_999_800_000L;
    static final long DAY = TimeUnit.DAYS.toMillis(1);

    /** Child process: args dataDir, round, first event number. Prints "ready", "roll", and "ack p offset value". */
    public static final class RollingProducer {
        public static void main(String[] args) throws Exception {
            long base = T0 + Long.parseLong(args[1]) * DAY - 1_000;
            long startReal = System.currentTimeMillis();
            EpochClock fast = () -> base + (System.currentTimeMillis() - startReal) * SPEED;
            Broker broker = Broker.open(BrokerConfig.builder(Path.of(args[0])).rollCycle(RollCycleType.FIVE_MINUTELY)
                    .clock(fast).retentionCheckMillis(3_600_000).build());
            broker.createTopicIfAbsent(TopicConfig.of("roll", 2));
            Producer journal = broker.newProducer(ProducerConfig.builder().acks(Acks.JOURNAL).build());
            Producer sync = broker.newProducer(ProducerConfig.builder().acks(Acks.SYNC).build());
            Thread rolls = new Thread(() -> {
                long cycle = fast.epochMillis() / CYCLE_MILLIS;
                while (true) {
                    long c = fast.epochMillis() / CYCLE_MILLIS;
                    if (c != cycle) {
                        cycle = c;
                        synchronized (System.out) {
                            System.out.println("roll " + c);
                            System.out.flush();
                        }
                    }
                    // a tick, not a spin: on a loaded two-core machine a spinning watcher takes a whole core from
                    // the producer and the journal (a roll is announced at most a millisecond late, 0.6 s of the fast
                    // clock, well inside a five-minute cycle)
                    java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L);
                }
            }, "roll-watcher");
            rolls.setDaemon(true);
            System.out.println("ready");
            System.out.flush();
            rolls.start();
            for (int i = Integer.parseInt(args[2]); ; i++) {
                final int n = i;
                int p = n % 2;
                (p == 0 ? journal : sync).send(ProducerRecord.of("roll", null, "event-" + n).withPartition(p), (partition, offset, error) -> {
                    if (error == null) {
                        synchronized (System.out) {
                            System.out.println("ack " + partition + " " + offset + " event-" + n);
                        }
                    }
                });
            }
        }
    }

    @Test
    void crashAroundARollLosesNothingAcknowledged() throws Exception {
        Map<String, String> acked = new HashMap<>(); // "p/offset" -> value
        int next = 0;
        for (int round = 0; round < 3; round++) {
            int acksBeforeKill = 300 * (round + 1);
            int acksThisRound = 0;
            int rollsAfterFirstAck = 0;
            // cycles (as announced by the last "roll" line) in which partition 0 acknowledged events: a roll can pass
            // with no write to partition 0 (the producer blocked on the SYNC partition), which leaves no cycle file
            Set<Long> partition0Cycles = new HashSet<>();
            long cycle = Long.MIN_VALUE;
            try (ChildJvm child = ChildJvm.start(RollingProducer.class, dir.toString(), Integer.toString(round), Integer.toString(next))) {
                assertThat(child.readLine()).isEqualTo("ready");
                String line;
                while ((line = child.readLine()) != null) {
                    if (line.startsWith("roll")) {
                        cycle = Long.parseLong(line.substring("roll ".length()));
                        if (acksThisRound > 0) {
                            rollsAfterFirstAck++;
                        }
                        // records in at least two cycles before the kill: the round leaves at least two cycle files,
                        // even when the journal acknowledges acksBeforeKill events within the first cycle. Three
                        // announced cycles, because an ack printed just after a roll line may be of the cycle before.
                        if (acksThisRound >= acksBeforeKill && rollsAfterFirstAck >= 2 && partition0Cycles.size() >= 3) {
                            child.kill(); // right after a roll: the new cycle has no, or only a few, records
                            break;
                        }
                        continue;
                    }
                    String[] f = line.split(" ");
                    if (f[0].equals("ack")) {
                        assertThat(acked.put(f[1] + "/" + f[2], f[3])).as("offset acknowledged twice").isNull();
                        next = Math.max(next, Integer.parseInt(f[3].substring("event-".length())) + 1);
                        acksThisRound++;
                        if (f[1].equals("0")) {
                            partition0Cycles.add(cycle);
                        }
                    }
                }
                // what the child printed after the last line read dies with its pipe: those acks are not checked
            }
            next += 1_000_000; // values of the next round never collide with unacknowledged ones of this round
        }
        assertThat(acked).hasSizeGreaterThanOrEqualTo(1_800);
        assertThat(cycleFiles(dir.resolve("topics/roll/0"))).isGreaterThan(3);

        long after = T0 + 10 * DAY;
        try (Broker broker = Broker.open(BrokerConfig.builder(dir).rollCycle(RollCycleType.FIVE_MINUTELY).clock(() -> after).build());
             Consumer c = broker.newConsumer(ConsumerConfig.builder().offsetReset(OffsetReset.EARLIEST).maxPollRecords(10_000).build())) {
            Set<TopicPartition> all = broker.partitionsOf("roll");
            c.assign(all);
            Map<String, String> stored = new HashMap<>();
            long[] expectedOffset = new long[2];
            long[] end = new long[2];
            for (TopicPartition tp : all) {
                end[tp.partition()] = broker.endOffset(tp);
            }
            // read up to the end offsets, not until the first empty poll: on a loaded machine a 200 ms poll can come
            // back empty while the reader moves to the next cycle file
            Await.until(() -> "read back to the end offsets " + java.util.Arrays.toString(end) + ", at "
                    + java.util.Arrays.toString(expectedOffset), Duration.ofSeconds(60), () -> {
                for (ConsumerRecord r : c.poll(Duration.ofMillis(200))) {
                    assertThat(r.offset()).as("dense offsets in %s", r.topicPartition()).isEqualTo(expectedOffset[r.partition()]);
                    expectedOffset[r.partition()]++;
                    stored.put(r.partition() + "/" + r.offset(), r.valueAsString());
                }
                return expectedOffset[0] >= end[0] && expectedOffset[1] >= end[1];
            });
            assertThat(c.poll(Duration.ofMillis(200))).as("nothing after the end offsets").isEmpty();
            for (TopicPartition tp : all) {
                assertThat(expectedOffset[tp.partition()]).isEqualTo(broker.endOffset(tp));
            }
            acked.forEach((key, value) -> assertThat(stored.get(key)).as("acknowledged %s", key).isEqualTo(value));
        }
    }

    @org.junit.jupiter.api.io.TempDir
    Path dir;

    static long cycleFiles(Path partitionDir) throws Exception {
        try (Stream<Path> s = Files.list(partitionDir)) {
            return s.filter(f -> f.getFileName().toString().endsWith(".cq4")).count();
        }
    }
}
