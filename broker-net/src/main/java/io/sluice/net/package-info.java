/** Sluice broker-net: the Netty broker, its wire protocol and the Java client. */
package io.sluice.net;
