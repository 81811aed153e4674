/**
 * The Kafka wire-protocol listener: {@link io.sluice.kafka.KafkaListener} serves a Sluice {@link io.sluice.core.Broker}
 * to unmodified Kafka clients (kafka-clients, librdkafka/kcat). Requests and responses are Kafka's generated message
 * classes ({@code org.apache.kafka.common.message.*}); the machinery (framing, the per-API handler table, one
 * handler per API) is in {@code io.sluice.kafka.internal}. See docs/kafka.md for the supported APIs and versions.
 */
package io.sluice.kafka;
