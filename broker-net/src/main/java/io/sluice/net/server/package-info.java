/**
 * The binary-protocol server: {@link io.sluice.net.server.BrokerServer} in front of an embedded core broker, configured
 * by {@link io.sluice.net.server.BrokerServerConfig}. The per-connection request pipeline lives in {@code internal}.
 */
package io.sluice.net.server;
