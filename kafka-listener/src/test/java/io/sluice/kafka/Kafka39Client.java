package io.sluice.kafka;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.AppInfoParser;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;

/**
 * The main {@link KafkaClients39Test} runs in a child JVM whose class path is kafka-clients 3.9 (and its own runtime
 * dependencies) plus this module's test classes: only kafka-clients API common to 3.9 and 4.x is used here.
 * A {@code KafkaProducer} with default settings (idempotent, acks=all since 3.0) sends {@code records} values, a
 * second one with {@code compression.type=zstd} another {@code records}, then a {@code KafkaConsumer} in group
 * {@code group} (subscribe, manual commits) reads them all. Prints, one per line:
 * {@code version V}, {@code acked VALUE PARTITION OFFSET}, {@code consumed VALUE PARTITION OFFSET}, {@code done}.
 *
 * <p>Arguments: bootstrap topic records group.
 */
public final class Kafka39Client {
    private Kafka39Client() {
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        int records = Integer.parseInt(args[2]);
        String group = args[3];
        System.out.println("version " + AppInfoParser.getVersion());

        List<String> acked = new ArrayList<>();
        produce(bootstrap, topic, records, null, "v39-", acked);
        produce(bootstrap, topic, records, "zstd", "v39z-", acked);

        Properties consumerProps = new Properties();
        consumerProps.put("bootstrap.servers", bootstrap);
        consumerProps.put("group.id", group);
        consumerProps.put("auto.offset.reset", "earliest");
        consumerProps.put("enable.auto.commit", "false");
        Set<String> seen = new HashSet<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        try (KafkaConsumer<String, String> consumer =
                     new KafkaConsumer<>(consumerProps, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(topic));
            while (seen.size() < 2 * records && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    seen.add(r.value());
                    System.out.println("consumed " + r.value() + " " + r.partition() + " " + r.offset());
                }
                consumer.commitSync();
            }
        }
        System.out.println("done");
    }

    /** A producer with default settings (plus {@code compression.type} if given) sends values prefix0..prefixN-1. */
    private static void produce(String bootstrap, String topic, int records, String compression, String prefix,
                                List<String> acked) {
        Properties producerProps = new Properties();
        producerProps.put("bootstrap.servers", bootstrap);
        if (compression != null) {
            producerProps.put("compression.type", compression);
        }
        List<String> lines = new ArrayList<>();
        try (KafkaProducer<String, String> producer =
                     new KafkaProducer<>(producerProps, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < records; i++) {
                String value = prefix + i;
                producer.send(new ProducerRecord<>(topic, Integer.toString(i), value), (metadata, error) -> {
                    synchronized (lines) {
                        lines.add(error != null ? "failed " + value + " " + error
                                : "acked " + value + " " + metadata.partition() + " " + metadata.offset());
                    }
                });
            }
            producer.flush();
        }
        synchronized (lines) {
            lines.forEach(System.out::println);
            acked.addAll(lines);
        }
    }
}
