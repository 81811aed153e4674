package io.sluice.kafka;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.net.server.BrokerServerConfig;

import java.nio.file.Path;

/**
 * A broker with a Kafka listener in its own JVM, for crash tests: {@code KafkaBrokerProcess <dataDir> <port>} prints
 * {@code READY} once clients can connect, then serves until it is killed.
 */
public final class KafkaBrokerProcess {
    private KafkaBrokerProcess() {
    }

    public static void main(String[] args) throws Exception {
        Broker broker = Broker.open(BrokerConfig.builder(Path.of(args[0])).build());
        KafkaListener.start(broker, KafkaListenerConfig.of(Integer.parseInt(args[1]),
                BrokerServerConfig.builder().ioThreads(1).build()));
        System.out.println("READY");
        System.out.flush();
        Thread.currentThread().join();
    }
}
