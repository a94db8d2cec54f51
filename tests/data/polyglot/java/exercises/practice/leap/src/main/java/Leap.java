class Leap {

    boolean isLeapYear(int year) {
        throw new UnsupportedOperationException("Delete this statement and write your own implementation.");
    }

}
