package io.sluice.net.client.internal;

import io.netty.buffer.ByteBuf;
import io.sluice.core.SluiceException;

/** Receives one response, on the connection's event loop. Exactly one method is called, once. */
public interface ResponseSink {
    /** @param body the response body, valid only during the call */
    void onResponse(ByteBuf body);

    /** An error response, or the connection was lost before the response arrived. */
    void onError(SluiceException error);
}
