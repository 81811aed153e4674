package io.sluice.cli;

import io.sluice.core.BrokerConfig;
import io.sluice.core.SluiceException.InvalidConfigException;
import io.sluice.core.config.ConfigDef;
import io.sluice.core.config.ConfigDef.Importance;
import io.sluice.core.config.ConfigDef.Type;
import io.sluice.ingest.IngestConfig;
import io.sluice.kafka.KafkaListenerConfig;
import io.sluice.net.http.HttpApiConfig;
import io.sluice.net.server.BrokerServerConfig;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * Every setting {@code sluice broker} reads, from one set of definitions: the core broker's
 * ({@link BrokerConfig#DEFINITION}), the binary listener's ({@link BrokerServerConfig#DEFINITION}), the HTTP API's
 * ({@link HttpApiConfig#DEFINITION}), the Kafka listener's ({@link KafkaListenerConfig#DEFINITION}) and the application's own (token and TLS files). {@code ingest.<name>.*} keys
 * are validated against {@link IngestConfig#DEFINITION}.
 *
 * <p>Where a value comes from, lowest precedence first: the definition's default, the {@code --config} file, a
 * {@code SLUICE_*} environment variable ({@code SLUICE_RING_SIZE} for {@code ring.size}), a command-line flag
 * ({@code --port}, or {@code --set KEY=VALUE} for any key). A key nobody defines is an error naming the nearest
 * defined key.
 */
final class BrokerSettings {
    static final String AUTH_TOKEN = "auth.token";
    static final String AUTH_TOKEN_FILE = "auth.token.file";
    static final String TLS_CERT_FILE = "tls.cert.file";
    static final String TLS_KEY_FILE = "tls.key.file";
    static final String AUTH_TOKEN_ENV = "SLUICE_AUTH_TOKEN";

    /** The application's own settings: secrets and files, read by the command and handed to the builders. */
    static final ConfigDef APPLICATION = new ConfigDef()
            .define(AUTH_TOKEN_FILE, Type.STRING, null, Importance.HIGH,
                    "file holding the shared token every client must present on both ports (`/health` stays open); never logged")
            .define(AUTH_TOKEN, Type.PASSWORD, null, Importance.HIGH,
                    "the shared token itself; give it as the SLUICE_AUTH_TOKEN environment variable rather than in a file "
                            + "(auth.token.file wins when both are set)")
            .define(TLS_CERT_FILE, Type.STRING, null, Importance.MEDIUM,
                    "PEM certificate chain: TLS on the binary port (with tls.key.file)")
            .define(TLS_KEY_FILE, Type.STRING, null, Importance.MEDIUM, "PEM PKCS#8 private key of tls.cert.file");

    /** The broker's keys: everything a {@code --config} file may hold outside {@code ingest.<name>.*}. */
    static final ConfigDef DEFINITION = new ConfigDef()
            .defineAll(BrokerConfig.DEFINITION)
            .defineAll(BrokerServerConfig.DEFINITION)
            .defineAll(HttpApiConfig.DEFINITION)
            .defineAll(KafkaListenerConfig.DEFINITION)
            .defineAll(APPLICATION);

    static final String INGEST_PREFIX = "ingest.";

    private BrokerSettings() {
    }

    /**
     * Resolves the broker's settings.
     *
     * @param file        the {@code --config} file's properties (possibly empty)
     * @param environment the process environment ({@code SLUICE_*} variables naming a defined key are settings)
     * @param flags       keys set on the command line
     * @return the parsed broker keys, and the {@code ingest.*} keys (validated later, section by section)
     * @throws InvalidConfigException naming the key: unknown (with the nearest known key), malformed or out of range
     */
    static Resolved resolve(Properties file, Map<String, String> environment, Map<String, String> flags) {
        Map<String, String> broker = new LinkedHashMap<>();
        Properties ingest = new Properties();
        for (String key : file.stringPropertyNames()) {
            String value = file.getProperty(key);
            if (key.startsWith(INGEST_PREFIX)) {
                String rest = key.substring(INGEST_PREFIX.length());
                int dot = rest.indexOf('.');
                if (dot <= 0 || dot == rest.length() - 1) {
                    throw new InvalidConfigException("'" + key + "' is not a known setting: ingest settings are written "
                            + "ingest.<name>.<setting>, e.g. ingest.orders.topic");
                }
                ingest.setProperty(key, value);
            } else {
                broker.put(key, value);
            }
        }
        broker.putAll(DEFINITION.fromEnvironment(environment));
        for (Map.Entry<String, String> e : flags.entrySet()) {
            if (e.getKey().startsWith(INGEST_PREFIX)) {
                ingest.setProperty(e.getKey(), e.getValue());
            } else {
                broker.put(e.getKey(), e.getValue());
            }
        }
        ConfigDef.Values values = DEFINITION.parse(broker);
        Properties all = new Properties();
        broker.forEach(all::setProperty);
        ingest.forEach(all::put);
        return new Resolved(values, ingest, all);
    }

    /**
     * @param values the broker's keys, parsed
     * @param ingest the {@code ingest.<name>.*} keys as given
     * @param all    every key as given (for components that read a Properties)
     */
    record Resolved(ConfigDef.Values values, Properties ingest, Properties all) {
    }

    /** The Markdown tables of docs/configuration.md, generated from the definitions. */
    static Map<String, String> markdownTables() {
        Map<String, String> tables = new LinkedHashMap<>();
        tables.put("broker", BrokerConfig.DEFINITION.toMarkdownTable(""));
        tables.put("binary", BrokerServerConfig.DEFINITION.toMarkdownTable(""));
        tables.put("http", HttpApiConfig.DEFINITION.toMarkdownTable(""));
        tables.put("kafka", KafkaListenerConfig.DEFINITION.toMarkdownTable(""));
        tables.put("application", APPLICATION.toMarkdownTable(""));
        tables.put("ingest", IngestConfig.DEFINITION.toMarkdownTable("ingest.<name>."));
        return tables;
    }
}
