package io.sluice.kafka.internal;

/**
 * Serves one Kafka API. Called on the connection's event loop with the decoded request; must not block there (hand
 * file or lock work to {@link ListenerContext#admin()} or another executor) and must complete the request exactly
 * once ({@link KafkaRequest#respond}, {@link KafkaRequest#respondNothing} or {@link KafkaRequest#fail}), from any
 * thread. An exception thrown here is answered with the API's error response (UNKNOWN_SERVER_ERROR).
 */
@FunctionalInterface
public interface ApiHandler {
    void handle(KafkaRequest request);
}
