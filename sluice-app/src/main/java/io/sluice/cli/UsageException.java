package io.sluice.cli;

/** A bad command line: the message says what is wrong; the CLI prints it with the command's usage and exits 2. */
final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
        super(message);
    }
}
