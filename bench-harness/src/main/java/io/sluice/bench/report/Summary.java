package io.sluice.bench.report;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The report's totals, counted from its tables alone so that a reader can recount them: every row's verdict against
 * the reference and against the same-run baseline (or peer), and every goal's status. Rows marked "not comparable"
 * count in no total; they are counted apart, with how many of them are numerically worse than the reference.
 */
public record Summary(Map<Verdict, Integer> vsReference, Map<Verdict, Integer> vsBaseline, int goalsMet,
                      int goalsMissed, int goalsNotApplicable, int notComparableWorse) {

    public Summary {
        vsReference = Map.copyOf(vsReference);
        vsBaseline = Map.copyOf(vsBaseline);
    }

    public static Summary of(List<Table> tables) {
        Map<Verdict, Integer> ref = zeros();
        Map<Verdict, Integer> base = zeros();
        int met = 0;
        int missed = 0;
        int notApplicable = 0;
        int worse = 0;
        for (Table t : tables) {
            for (Row r : t.rows()) {
                ref.merge(r.referenceVerdict(), 1, Integer::sum);
                base.merge(r.baselineVerdict(), 1, Integer::sum);
                if (r.worseThanIncomparableReference()) {
                    worse++;
                }
                for (Goal g : r.goals()) {
                    switch (g.status(r)) {
                        case MET -> met++;
                        case MISSED -> missed++;
                        case NOT_APPLICABLE -> notApplicable++;
                        case NO_FIGURE -> { }
                    }
                }
            }
        }
        return new Summary(ref, base, met, missed, notApplicable, worse);
    }

    private static Map<Verdict, Integer> zeros() {
        Map<Verdict, Integer> m = new EnumMap<>(Verdict.class);
        for (Verdict v : Verdict.values()) {
            m.put(v, 0);
        }
        return m;
    }

    /** The summary paragraph: each count names the verdict cells it counts, so it can be recounted from the tables. */
    public String markdown() {
        return "Against the **reference** (column \"Sluice vs reference\"): Sluice's median **beats** it in **"
                + vsReference.get(Verdict.BEATS) + "** rows, **ties** (±1%) in **" + vsReference.get(Verdict.TIES)
                + "** and **loses** in **" + vsReference.get(Verdict.LOSES) + "**. **"
                + vsReference.get(Verdict.NOT_COMPARABLE) + "** rows are *not comparable* (each says why) and count in "
                + "none of these totals; in " + notComparableWorse + " of them Sluice's figure is numerically worse than "
                + "the reference's.\n\n"
                + "Against the **same-run baseline or peer** (column \"Sluice vs baseline\"): beats in **"
                + vsBaseline.get(Verdict.BEATS) + "**, ties in **" + vsBaseline.get(Verdict.TIES) + "**, loses in **"
                + vsBaseline.get(Verdict.LOSES) + "**.\n\n"
                + "**Goals** stated in the tables (column \"goal\"): **" + goalsMet + "** met, **" + goalsMissed
                + "** missed" + (goalsNotApplicable == 0 ? "" : "; **" + goalsNotApplicable + "** not applicable (goals that "
                + "hold only where the same-run baseline reaches them, and it does not here: counted in neither)") + ".\n\n";
    }
}
