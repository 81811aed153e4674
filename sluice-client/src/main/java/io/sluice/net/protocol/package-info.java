/**
 * The Sluice binary protocol: frames ({@link io.sluice.net.protocol.Frames}, {@link io.sluice.net.protocol.FrameDecoder}),
 * primitive types ({@link io.sluice.net.protocol.Wire}) and one class per API holding its request and response layouts,
 * encoded and decoded by hand (no reflection). Shared by the server and the client; {@code docs/PROTOCOL.md} is the
 * specification.
 */
package io.sluice.net.protocol;
