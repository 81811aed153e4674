package io.sluice.cli;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

import java.io.PrintStream;
import java.util.concurrent.Callable;

/**
 * One {@code sluice} subcommand: picocli fills its annotated fields, then {@link #execute()} runs it. A
 * {@link UsageException} from execute() (a value picocli cannot judge alone, such as a setting out of range) is
 * reported like a parse error: the message, the usage, exit code 2.
 */
abstract class SubCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandSpec spec;

    protected final PrintStream out;
    protected final PrintStream err;

    SubCommand(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    /** @return the exit code */
    abstract int execute() throws UsageException;

    @Override
    public final Integer call() {
        try {
            return execute();
        } catch (UsageException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage(), e);
        }
    }

    /** Runs this command alone on {@code args} (tests); parse errors are exit code 2 as under {@code sluice}. */
    int runAlone(String[] args) throws UsageException {
        CommandLine cl = new CommandLine(this);
        cl.setCommandName("sluice " + cl.getCommandName());
        SluiceCli.configure(cl, out, err);
        return cl.execute(args);
    }

    /** {@code value} must lie in [min, max]; the message names the option. */
    static long check(String option, long value, long min, long max) throws UsageException {
        if (value < min || value > max) {
            throw new UsageException(option + " must be between " + min + " and " + max + ", got " + value);
        }
        return value;
    }
}
