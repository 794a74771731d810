// A CPU-bound Java program with named methods, JSON parsing (a small parser
// of its own: the JDK has none) and regular expressions
// (tests/e2e/languages_test.cpp, bench/languages/). Runs for args[0]
// seconds (default 1.5).
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class App {
  static final Pattern TAG = Pattern.compile("^([a-z]+)-(\\d+)$");

  static String makeDocument(int count) {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < count; i++) {
      if (i > 0) b.append(',');
      b.append("{\"id\":").append(i).append(",\"tags\":[\"alpha-").append(i)
          .append("\",\"beta-").append(i * 7).append("\",\"Gamma").append(i)
          .append("\"]}");
    }
    return b.append(']').toString();
  }

  // Parses the document's shape: an array of objects whose "tags" member is
  // an array of strings; returns each object's tags.
  static List<List<String>> parseDocument(String text) {
    List<List<String>> records = new ArrayList<>();
    int i = 0;
    while ((i = text.indexOf("\"tags\":[", i)) >= 0) {
      i += 8;
      List<String> tags = new ArrayList<>();
      while (text.charAt(i) == '"') {
        int end = text.indexOf('"', i + 1);
        tags.add(text.substring(i + 1, end));
        i = end + 1;
        if (text.charAt(i) == ',') i++;
      }
      records.add(tags);
    }
    return records;
  }

  static int scoreTags(List<String> tags) {
    int score = 0;
    for (String tag : tags) {
      Matcher m = TAG.matcher(tag);
      if (m.matches()) score += m.group(1).length() + Integer.parseInt(m.group(2)) % 13;
    }
    return score;
  }

  static int fibonacci(int n) { return n < 2 ? n : fibonacci(n - 1) + fibonacci(n - 2); }

  static long scoreDocument(List<List<String>> records) {
    long total = 0;
    for (List<String> tags : records) total += scoreTags(tags);
    return total + fibonacci(18);
  }

  public static void main(String[] args) {
    double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 1.5;
    String text = makeDocument(400);
    long deadline = System.nanoTime() + (long) (seconds * 1e9);
    long total = 0;
    while (System.nanoTime() < deadline) total += scoreDocument(parseDocument(text));
    System.out.println("total " + total);
  }
}
