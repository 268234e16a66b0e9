package io.nvmeof.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.cli.Main;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Every {@code nvmeof} command line in the shell blocks of the README and the guide pages names a
 * command that exists, with options it has, taking values of the kinds they take: each is parsed by
 * the command line's own picocli model (nothing runs). This is the check for the pages whose paths
 * need what a build machine lacks (an RDMA device, a Linux host with nvme-cli, systemd, a second
 * address); the paths that run here are {@link GuidePathsTest} and {@link RbdGuideTest}. A
 * placeholder ({@code <host NQN>}) stands for one word, and an optional part ({@code [-o json]}) is
 * parsed as if given.
 */
class GuideCommandLinesTest {
    private static final Path ROOT = GuidePath.ROOT;
    /** Each page, and how many nvmeof command lines it shows at least (so that the scan cannot miss a page silently). */
    private static final Map<String, Integer> PAGES = Map.of(
            "README.md", 1,
            "docs/guide/target.md", 6,
            "docs/guide/initiator.md", 5,
            "docs/guide/benchmarking.md", 10,
            "docs/guide/security.md", 4,
            "docs/guide/service.md", 1,
            "docs/guide/gateways.md", 4,
            "docs/guide/discovery.md", 5,
            "docs/guide/management.md", 5,
            "docs/guide/rbd.md", 3);

    @Test
    void everyCommandLineParses() throws IOException {
        List<String> wrong = new ArrayList<>();
        Map<String, Integer> counted = new TreeMap<>();
        for (String page : PAGES.keySet()) {
            int n = 0;
            for (List<String> argv : commandLines(Files.readString(ROOT.resolve(page)))) {
                n++;
                try {
                    new CommandLine(new Main()).parseArgs(argv.toArray(String[]::new));
                } catch (CommandLine.ParameterException e) {
                    wrong.add(page + ": nvmeof " + String.join(" ", argv) + ": " + e.getMessage());
                }
            }
            counted.put(page, n);
        }
        assertEquals(List.of(), wrong, "command lines that do not parse");
        for (Map.Entry<String, Integer> p : PAGES.entrySet()) {
            assertTrue(counted.get(p.getKey()) >= p.getValue(), p.getKey() + " shows " + counted.get(p.getKey())
                    + " nvmeof command lines, fewer than " + p.getValue());
        }
    }

    @Test
    void theScannerReadsShellAsAShellWould() {
        List<List<String>> lines = commandLines("""
                text
                ```sh
                U=nvme+tcp://h:4420/nqn.x   # a comment
                ./nvmeof read  $U --offset 0 [-o json] > out  # after
                sudo nvmeof rpc add '{"a": 1,
                   "b": 2}'
                cat <<EOF
                nvmeof not a command
                EOF
                nvmeof target --listen tcp://a:1 \\
                    --allow-host <host NQN> &
                nvme connect -t tcp
                ```

                    nvmeof demo                             # indented block
                """);
        assertEquals(List.of(
                List.of("read", "nvme+tcp://h:4420/nqn.x", "--offset", "0", "-o", "json"),
                List.of("rpc", "add", "{\"a\": 1,\n   \"b\": 2}"),
                List.of("target", "--listen", "tcp://a:1", "--allow-host", "X"),
                List.of("demo")), lines);
    }

    /** The arguments of each {@code nvmeof} command in the page's shell blocks: fenced (sh, bash or bare) and indented. */
    static List<List<String>> commandLines(String page) {
        List<List<String>> out = new ArrayList<>();
        StringBuilder prose = new StringBuilder();
        StringBuilder block = null;
        String lang = null;
        int indent = 0;
        for (String line : page.split("\n", -1)) {
            String t = line.stripLeading();
            if (t.startsWith("```")) {
                if (lang == null) {
                    lang = t.substring(3).strip();
                    indent = line.length() - t.length();
                    block = new StringBuilder();
                } else {
                    if (List.of("", "sh", "bash").contains(lang)) {
                        out.addAll(shell(block.toString()));
                    }
                    lang = null;
                }
                prose.append('\n');
            } else if (lang != null) {
                block.append(line.length() >= indent && line.substring(0, indent).isBlank() ? line.substring(indent) : t)
                        .append('\n');
            } else {
                prose.append(line).append('\n');
            }
        }
        Matcher indented = Pattern.compile("(?<=\n\n)((?: {4}\\S.*\n)+)").matcher(prose);
        while (indented.find()) {
            out.addAll(shell(indented.group(1).replaceAll("(?m)^ {4}", "")));
        }
        return out;
    }

    /** The shell's words, command by command; keeps those whose command is nvmeof (after sudo and assignments). */
    private static List<List<String>> shell(String script) {
        script = script.replaceAll("<[A-Za-z][^<>\n]*>", "X");
        Map<String, String> vars = new HashMap<>();
        List<List<String>> out = new ArrayList<>();
        List<String> words = new ArrayList<>();
        StringBuilder w = null;
        boolean quotedWord = false;
        String heredoc = null;
        int i = 0;
        while (i < script.length()) {
            char c = script.charAt(i);
            if (heredoc != null) { // skip to the line that ends the here-document
                int eol = script.indexOf('\n', i);
                String line = script.substring(i, eol < 0 ? script.length() : eol);
                i = eol < 0 ? script.length() : eol + 1;
                if (line.strip().equals(heredoc)) {
                    heredoc = null;
                }
                continue;
            }
            if (c == '\\' && i + 1 < script.length() && script.charAt(i + 1) == '\n') {
                i += 2;
                continue;
            }
            if (c == '\'' || c == '"') {
                int end = script.indexOf(c, i + 1);
                end = end < 0 ? script.length() : end;
                String q = script.substring(i + 1, end);
                w = w == null ? new StringBuilder() : w;
                w.append(c == '"' ? expand(q, vars) : q);
                quotedWord = true;
                i = Math.min(end + 1, script.length());
                continue;
            }
            if (c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '>' || c == '<'
                    || c == '#' && w == null) {
                if (w != null) {
                    words.add(quotedWord ? w.toString() : optional(expand(w.toString(), vars)));
                    w = null;
                    quotedWord = false;
                }
                if (c == '<' && script.startsWith("<<", i)) {
                    Matcher m = Pattern.compile("<<-?\\s*'?(\\w+)'?").matcher(script.substring(i));
                    m.lookingAt();
                    heredoc = m.group(1);
                    i = script.indexOf('\n', i); // the rest of this line still belongs to the command
                    end(words, vars, out);
                    continue;
                }
                if (c == '#') {
                    int eol = script.indexOf('\n', i);
                    i = eol < 0 ? script.length() : eol;
                    continue;
                }
                if (c != ' ' && c != '\t') {
                    end(words, vars, out);
                    if (c == '>' || c == '<') { // a redirection: the rest of the line is not the command's
                        int eol = script.indexOf('\n', i);
                        i = eol < 0 ? script.length() : eol;
                        continue;
                    }
                }
                i++;
                continue;
            }
            w = w == null ? new StringBuilder() : w;
            w.append(c);
            i++;
        }
        if (w != null) {
            words.add(quotedWord ? w.toString() : optional(expand(w.toString(), vars)));
        }
        end(words, vars, out);
        return out;
    }

    /** An optional part, {@code [--flag value]}, is parsed as if given. */
    private static String optional(String word) {
        return word.replaceAll("^\\[|\\]$", "");
    }

    private static String expand(String s, Map<String, String> vars) {
        Matcher m = Pattern.compile("\\$\\{?(\\w+)}?").matcher(s);
        StringBuilder b = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(b, Matcher.quoteReplacement(vars.getOrDefault(m.group(1), "x")));
        }
        return m.appendTail(b).toString();
    }

    private static void end(List<String> words, Map<String, String> vars, List<List<String>> out) {
        int at = 0;
        while (at < words.size() && (words.get(at).equals("sudo") || words.get(at).matches("\\w+=.*"))) {
            if (words.get(at).matches("\\w+=.*") && words.size() == 1) {
                String[] kv = words.get(at).split("=", 2);
                vars.put(kv[0], kv[1]);
            }
            at++;
        }
        if (at < words.size() && (words.get(at).equals("nvmeof") || words.get(at).equals("./nvmeof"))) {
            out.add(new ArrayList<>(words.subList(at + 1, words.size())));
        }
        words.clear();
    }
}
