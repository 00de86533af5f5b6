package org.inagg.control.plan;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Regression tests of fuzzing findings on the plan file (docs/fuzzing.md, PlanFileFuzzTest): Jackson leaves a missing
 * field null and reads the document {@code null} as no plan at all, and {@code deploy} then failed with a
 * NullPointerException instead of saying what is wrong with the file; a key given twice silently kept the last value.
 */
class PlanJsonFuzzFindingsTest {

    private static final String MINIMAL = """
        {"schema": "inagg-plan/1", "topology": "t", "algorithm": "grid", "rateGbps": 1, "lpBoundGbps": 1,
         "split": {"PS": 1.0},
         "workers": [{"worker": "W1", "shares": [{"ps": "PS", "share": 1.0, "aggregateAt": "PS", "group": null,
                      "path": ["W1", "PS"]}]}],
         "switchJobTables": {}, "multicastTrees": [], "violationsAtLpRate": []}
        """;

    @Test
    void shouldReadTheMinimalPlan() {
        // The baseline the rejections below are edits of: every field it states is read as stated.
        InaPlan plan = PlanJson.read(MINIMAL);
        assertThat(plan.algorithm()).isEqualTo("grid");
        assertThat(plan.split()).containsExactly(java.util.Map.entry("PS", 1.0));
        assertThat(plan.workers()).singleElement().satisfies(worker -> {
            assertThat(worker.worker()).isEqualTo("W1");
            assertThat(worker.shares()).singleElement()
                .isEqualTo(new InaPlan.Share("PS", 1.0, "PS", null, java.util.List.of("W1", "PS")));
        });
        assertThat(PlanJson.read(PlanJson.write(plan))).isEqualTo(plan);
    }

    @Test
    void shouldSayWhichFieldIsMissingInsteadOfThrowingANullPointerException() {
        assertThatIllegalArgumentException()
            .isThrownBy(() -> PlanJson.read(MINIMAL.replace("\"workers\"", "\"workersX\"")
                .replace("\"violationsAtLpRate\": []", "\"violationsAtLpRate\": [], \"workers\": null")))
            .withMessageContaining("workers");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> PlanJson.read(MINIMAL.replace("\"aggregateAt\": \"PS\", ", "")))
            .withMessageContaining("aggregateAt");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> PlanJson.read(MINIMAL.replace("{\"PS\": 1.0}", "{\"PS\": null}")))
            .withMessageContaining("split.PS");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> PlanJson.read(MINIMAL.replace("\"multicastTrees\": []",
                "\"multicastTrees\": [{\"source\": \"PS\", \"receivers\": [], \"ports\": {\"S\": [1, null]}}]")))
            .withMessageContaining("port");
        assertThatIllegalArgumentException()
            .isThrownBy(() -> PlanJson.read(MINIMAL.replace("[\"W1\", \"PS\"]", "[\"W1\", null]")))
            .withMessageContaining("path");
    }

    @Test
    void shouldRejectTheNullDocument() {
        assertThatIllegalArgumentException().isThrownBy(() -> PlanJson.read("null")).withMessageContaining("plan");
    }

    @Test
    void shouldRejectAKeyGivenTwice() {
        assertThatIllegalArgumentException()
            .isThrownBy(() -> PlanJson.read(MINIMAL.replace("\"algorithm\": \"grid\"",
                "\"algorithm\": \"grid\", \"algorithm\": \"inart\"")))
            .withMessageContaining("algorithm");
    }
}
