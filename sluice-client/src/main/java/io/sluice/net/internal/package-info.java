/** Pieces shared by the server and the client: transport selection (epoll or NIO) and address parsing. Not API. */
package io.sluice.net.internal;
