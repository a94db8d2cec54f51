import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

public class LeapTest {

    private final Leap leap = new Leap();

    @Test
    @DisplayName("year not divisible by 4 in common year")
    public void testYearNotDivBy4() {
        assertThat(leap.isLeapYear(2015)).isFalse();
    }

    @Disabled("Remove to run test")
    @Test
    @DisplayName("year divisible by 100, not divisible by 400 in common year")
    public void testYearDivBy100NotBy400() {
        assertThat(leap.isLeapYear(2100)).isFalse();
    }

    @Disabled("Remove to run test")
    @Test
    @DisplayName("year divisible by 400 is leap year")
    public void testYearDivBy400() {
        assertThat(leap.isLeapYear(2000)).isTrue();
    }
}
