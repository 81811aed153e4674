package io.sluice.core.internal.bus;

import com.lmax.disruptor.ExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Disruptor exception handler that logs and keeps the processor running (handlers catch their own errors first). */
final class LoggingExceptionHandler implements ExceptionHandler<Object> {
    private static final Logger LOG = LoggerFactory.getLogger(LoggingExceptionHandler.class);
    private final String stage;

    LoggingExceptionHandler(String stage) {
        this.stage = stage;
    }

    @Override
    public void handleEventException(Throwable ex, long sequence, Object event) {
        LOG.error("{}: unexpected failure at sequence {}", stage, sequence, ex);
    }

    @Override
    public void handleOnStartException(Throwable ex) {
        LOG.error("{}: failed to start", stage, ex);
    }

    @Override
    public void handleOnShutdownException(Throwable ex) {
        LOG.error("{}: failed to shut down cleanly", stage, ex);
    }
}
