package io.sluice.faults;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.StringJoiner;

/**
 * One member of a run's Kafka group, in a JVM of its own so that the nemesis can SIGSTOP it whole (its heartbeat
 * thread included, as a stopped machine or a long GC pause would): Kafka's own {@code KafkaConsumer} with the classic
 * group protocol and its default assignors, subscribed to one topic through the broker's Kafka listener. It polls,
 * commits what it read at most once a second (each commit is an fsync on the broker; what the checker decides
 * from is the assignments and reads, not the commits), and reports on stdout what it owned and read, one line each:
 * <pre>
 * &#64;member assigned GENERATION MEMBER_ID PARTITION,PARTITION,...   (every onPartitionsAssigned, even an empty one)
 * &#64;member read GENERATION MEMBER_ID PARTITION FIRST_OFFSET LAST_OFFSET   (per partition of a poll's records)
 * &#64;member commit ok|fail GENERATION MEMBER_ID [ERROR]
 * &#64;member fail ERROR                                               (the consumer threw; a new one joins)
 * </pre>
 * The generation of a read is the consumer's generation right after the poll that returned it: the classic (eager)
 * protocol revokes every partition and drops what was fetched for it before a rebalance completes, so records a poll
 * returns were fetched under that generation. Other output (the client's logging) carries no prefix and is ignored.
 *
 * <p>Usage: {@code KafkaMember BOOTSTRAP GROUP TOPIC CLIENT_ID}. Runs until killed.
 */
public final class KafkaMember {
    /** The members' {@code session.timeout.ms}: the broker's smallest (Kafka's {@code group.min.session.timeout.ms}). */
    public static final int SESSION_TIMEOUT_MS = 6_000;
    /** The prefix of every line the parent reads. */
    static final String PREFIX = "@member ";
    private static final long COMMIT_INTERVAL_NANOS = 1_000_000_000L;

    private KafkaMember() {
    }

    static Properties properties(String bootstrap, String group, String clientId) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("client.id", clientId);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        p.put("session.timeout.ms", Integer.toString(SESSION_TIMEOUT_MS));
        p.put("heartbeat.interval.ms", "500");
        p.put("max.poll.interval.ms", "30000");
        p.put("fetch.max.wait.ms", "100");
        // a broker killed or paused by the nemesis: requests and commits give up in seconds and are tried again,
        // rather than holding the poll loop for the defaults' 30 and 60 s
        p.put("request.timeout.ms", "5000");
        p.put("default.api.timeout.ms", "10000");
        return p;
    }

    public static void main(String[] args) {
        if (args.length != 4) {
            System.err.println("usage: KafkaMember BOOTSTRAP GROUP TOPIC CLIENT_ID");
            System.exit(2);
        }
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
        while (true) {
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties(args[0], args[1], args[3]))) {
                run(consumer, args[2], out);
            } catch (KafkaException | IllegalStateException e) {
                out.println(PREFIX + "fail " + oneLine(e));
                java.util.concurrent.locks.LockSupport.parkNanos(200_000_000L); // back off before joining again
            }
        }
    }

    private static void run(KafkaConsumer<String, String> consumer, String topic, PrintStream out) {
        consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                ConsumerGroupMetadata g = consumer.groupMetadata();
                StringJoiner owned = new StringJoiner(",");
                partitions.forEach(tp -> owned.add(Integer.toString(tp.partition())));
                out.println(PREFIX + "assigned " + g.generationId() + " " + g.memberId() + " " + owned);
            }
        });
        long lastCommit = System.nanoTime();
        boolean uncommitted = false;
        while (true) {
            ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
            if (!records.isEmpty()) {
                ConsumerGroupMetadata g = consumer.groupMetadata();
                for (TopicPartition tp : records.partitions()) {
                    List<ConsumerRecord<String, String>> rs = records.records(tp);
                    out.println(PREFIX + "read " + g.generationId() + " " + g.memberId() + " " + tp.partition() + " "
                            + rs.get(0).offset() + " " + rs.get(rs.size() - 1).offset());
                }
                uncommitted = true;
            }
            if (uncommitted && System.nanoTime() - lastCommit >= COMMIT_INTERVAL_NANOS) {
                lastCommit = System.nanoTime();
                uncommitted = false;
                commit(consumer, out);
            }
        }
    }

    private static void commit(KafkaConsumer<String, String> consumer, PrintStream out) {
        ConsumerGroupMetadata g = consumer.groupMetadata();
        try {
            consumer.commitSync();
            out.println(PREFIX + "commit ok " + g.generationId() + " " + g.memberId());
        } catch (KafkaException refused) {
            // CommitFailedException, RebalanceInProgressException, a timeout while the broker is away: the
            // partitions' next owner reads from the last commit that was accepted
            out.println(PREFIX + "commit fail " + g.generationId() + " " + g.memberId() + " " + oneLine(refused));
        }
    }

    static String oneLine(Throwable e) {
        return (e.getClass().getSimpleName() + ": " + e.getMessage()).replace('\n', ' ');
    }
}
