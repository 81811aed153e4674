package io.sluice.examples;

import io.sluice.core.Acks;
import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.core.Consumer;
import io.sluice.core.ConsumerConfig;
import io.sluice.core.ConsumerRecord;
import io.sluice.core.GroupAdmin;
import io.sluice.core.OffsetReset;
import io.sluice.core.Producer;
import io.sluice.core.ProducerConfig;
import io.sluice.core.ProducerRecord;
import io.sluice.core.RecordMetadata;
import io.sluice.core.TopicConfig;

import java.nio.file.Path;
import java.time.Duration;

/**
 * An application that embeds Sluice: opens a broker on a data directory, journals 1,000 orders and reads them back
 * in a consumer group. Run it with the JVM flags Chronicle Queue needs:
 * <pre>
 * java @sluice.jvmopts -cp "example-embedded-app.jar:lib/*" io.sluice.examples.EmbeddedApp ./data
 * </pre>
 */
public final class EmbeddedApp {
    private EmbeddedApp() {
    }

    public static void main(String[] args) {
        Path dataDir = Path.of(args.length > 0 ? args[0] : "data");
        int orders = 1_000;
        try (Broker broker = Broker.open(BrokerConfig.builder(dataDir).build())) {
            broker.createTopicIfAbsent(TopicConfig.of("orders", 4));

            try (Producer producer = broker.newProducer(ProducerConfig.builder().acks(Acks.JOURNAL).build())) {
                RecordMetadata first = producer.send(ProducerRecord.of("orders", "customer-0", "{\"total\":0}")).join();
                System.out.println("first order journaled at partition " + first.partition() + ", offset " + first.offset());
                for (int i = 1; i < orders; i++) {
                    producer.send(ProducerRecord.of("orders", "customer-" + (i % 42), "{\"total\":" + i + "}"));
                }
                producer.flush(); // every send above is journaled once this returns
            }

            try (Consumer consumer = broker.newConsumer(ConsumerConfig.builder()
                    .groupId("billing").offsetReset(OffsetReset.EARLIEST).build())) {
                consumer.subscribe("orders");
                long total = 0;
                int seen = 0;
                while (seen < orders) {
                    for (ConsumerRecord r : consumer.poll(Duration.ofSeconds(1))) {
                        String value = r.valueAsString();
                        total += Long.parseLong(value.substring(value.indexOf(':') + 1, value.length() - 1));
                        seen++;
                    }
                }
                consumer.commitSync();
                System.out.println("consumed " + seen + " orders, total " + total);
            }
            System.out.println("lag of group billing: " + new GroupAdmin(broker).describe("billing").totalLag());
        }
    }
}
