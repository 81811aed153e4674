/** Sluices network protocol (frames and messages) and its Java client; the server is in broker-net. */
package io.sluice.net;
