/**
 * The Java client: {@link io.sluice.net.client.RemoteProducer} and {@link io.sluice.net.client.RemoteConsumer}
 * implement the core {@code Producer} and {@code Consumer}, so moving from embedded to networked is a change of
 * constructor; {@link io.sluice.net.client.RemoteAdmin} manages topics. Depends on the protocol, never on the server.
 */
package io.sluice.net.client;
