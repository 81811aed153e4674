package io.sluice.kafka;

import io.sluice.core.SluiceException.InvalidConfigException;
import io.sluice.core.config.ConfigDef;
import io.sluice.core.config.ConfigDef.Importance;
import io.sluice.core.config.ConfigDef.Type;
import io.sluice.core.config.Validator;
import io.sluice.net.server.BrokerServerConfig;

import java.util.Objects;

/**
 * The Kafka listener's settings, validated once here (each error names the setting and the value). Everything that
 * is not Kafka-specific comes from the binary port's {@link BrokerServerConfig}: the bind address, the auth token
 * (presented as SASL/PLAIN's password), TLS, the frame and connection bounds, the pre-authentication bounds, the
 * fetch caps and the I/O thread count. One set of limits for both ports: an operator sets them once.
 *
 * @param port           TCP port ({@code kafka.port}); 0 picks a free port (see {@link KafkaListener#port()})
 * @param advertisedHost the host clients are told to connect to in Metadata ({@code kafka.advertised.host}); null:
 *                       the bind address, or the machine's host name when binding a wildcard address
 * @param nodeId         the broker id given in Metadata as the only broker, every partition's leader and the
 *                       controller ({@code kafka.node.id})
 * @param server         the binary port's settings, whose bounds, token and TLS apply here too
 */
public record KafkaListenerConfig(int port, String advertisedHost, int nodeId, BrokerServerConfig server) {

    public static final String PORT = "kafka.port";
    public static final String ADVERTISED_HOST = "kafka.advertised.host";
    public static final String NODE_ID = "kafka.node.id";
    /** {@link #PORT}'s value that leaves the listener off. */
    public static final int OFF = -1;

    /**
     * The listener's keys as the broker's properties file names them. {@code kafka.port} is off by default: 9092 is
     * where a real Kafka listens on most developers' machines, and a broker that silently took it (or failed to start
     * because it was taken) would surprise both; the Kafka listener is opt-in ({@code --kafka-port 9092}).
     */
    public static final ConfigDef DEFINITION = new ConfigDef()
            .define(PORT, Type.INT, OFF, Validator.between(OFF, 65_535), Importance.HIGH,
                    "Kafka wire-protocol port (docs/kafka.md); -1 (the default) leaves it off, since 9092 is usually a "
                            + "real Kafka's on a developer machine; 0 picks a free port. The bind address, auth token "
                            + "(SASL/PLAIN password), TLS and the binary port's bounds apply")
            .define(ADVERTISED_HOST, Type.STRING, null, Importance.MEDIUM,
                    "host name Kafka clients are sent to in Metadata (default: the bind address, or this machine's "
                            + "host name when bound to 0.0.0.0)")
            .define(NODE_ID, Type.INT, 1, Validator.between(0, Integer.MAX_VALUE), Importance.LOW,
                    "broker id reported to Kafka clients (the only broker, every partition's leader and the controller)");

    public KafkaListenerConfig {
        Objects.requireNonNull(server, "server");
        if (port < 0 || port > 65_535) {
            throw new InvalidConfigException(PORT + " must be between 0 and 65535 when the listener starts, got " + port);
        }
        if (advertisedHost != null && advertisedHost.isBlank()) {
            throw new InvalidConfigException(ADVERTISED_HOST + " must not be blank");
        }
        if (nodeId < 0) {
            throw new InvalidConfigException(NODE_ID + " must be >= 0, got " + nodeId);
        }
    }

    /**
     * The listener's settings from parsed broker settings, or null when {@code kafka.port} is off.
     *
     * @param server the binary port's settings already built from the same values
     */
    public static KafkaListenerConfig from(ConfigDef.Values settings, BrokerServerConfig server) {
        int port = settings.getInt(PORT);
        if (port == OFF) {
            return null;
        }
        return new KafkaListenerConfig(port, settings.getString(ADVERTISED_HOST), settings.getInt(NODE_ID), server);
    }

    /** A listener on {@code port} with the defaults and {@code server}'s bounds. */
    public static KafkaListenerConfig of(int port, BrokerServerConfig server) {
        return new KafkaListenerConfig(port, null, DEFINITION.defaultInt(NODE_ID), server);
    }

    public KafkaListenerConfig withAdvertisedHost(String host) {
        return new KafkaListenerConfig(port, host, nodeId, server);
    }
}
