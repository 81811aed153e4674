package io.sluice.kafka;

import io.sluice.core.Broker;
import io.sluice.core.BrokerConfig;
import io.sluice.net.server.BrokerServerConfig;

import java.nio.file.Path;
import java.util.Properties;
import java.util.function.UnaryOperator;

/** A real core broker in a temporary directory behind a real {@link KafkaListener} on a free loopback port. */
public final class KafkaListenerFixture implements AutoCloseable {
    public final Path dataDir;
    public final Broker broker;
    public final KafkaListener listener;

    private KafkaListenerFixture(Path dataDir, UnaryOperator<BrokerServerConfig.Builder> serverSettings) {
        this.dataDir = dataDir;
        this.broker = Broker.open(BrokerConfig.builder(dataDir).build());
        KafkaListener started;
        try {
            started = KafkaListener.start(broker, KafkaListenerConfig.of(0,
                    serverSettings.apply(BrokerServerConfig.builder().ioThreads(2)).build()));
        } catch (RuntimeException e) {
            broker.close();
            throw e;
        }
        this.listener = started;
    }

    public static KafkaListenerFixture start(Path dataDir) {
        return new KafkaListenerFixture(dataDir, s -> s);
    }

    public static KafkaListenerFixture start(Path dataDir, UnaryOperator<BrokerServerConfig.Builder> serverSettings) {
        return new KafkaListenerFixture(dataDir, serverSettings);
    }

    public String bootstrap() {
        return "127.0.0.1:" + listener.port();
    }

    /** Client settings every test uses: this listener, short timeouts so a failure shows quickly. */
    public Properties clientProperties() {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap());
        p.put("request.timeout.ms", "10000");
        p.put("default.api.timeout.ms", "20000");
        return p;
    }

    @Override
    public void close() {
        listener.close();
        broker.close();
    }
}
