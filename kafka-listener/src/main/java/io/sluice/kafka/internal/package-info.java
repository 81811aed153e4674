/**
 * The Kafka listener's machinery: {@link io.sluice.kafka.internal.KafkaConnection} (one per connection, on its
 * event loop) frames requests, decodes the header and then the generated request of that API and version, and hands
 * it to the handler the one table {@link io.sluice.kafka.internal.KafkaApis} names for that API; responses leave in
 * request order. Not API: may change in any release.
 */
package io.sluice.kafka.internal;
