#!/usr/bin/env perl
# `make lint`: the module import graph of src/ has no cycle and no import that runs back
# up the layers.
#
# Every `use crate::...;` / `use super::...;` statement (braces expanded) and every
# inline `crate::a::b` path of a non-comment line is an edge from the file's module to
# the longest known module the path names. Then:
#   - layers: each top-level area has a rank (below); an edge to a higher rank is an
#     upward import. Tests count too.
#   - cycles: strongly connected components of the module graph, where edges between a
#     module and its own ancestors or descendants do not count (a parent and the files
#     it is split into are one unit: `mod.rs` re-exports, children `impl` its types).
# Prints each violation and exits 1 if there is any. Usage: scripts/check-layers.pl [SRC]
use strict;
use warnings;
use File::Find;

my $src = shift // 'src';

# Lowest first. An area may import its own and any lower one.
my @layers = qw(console error date debug signals stats protocol workload results resultfile plan
                engine report merge sinks frontend main);
my %rank;
@rank{@layers} = (0 .. $#layers);

my %file_of;    # module path -> file
find(
    sub {
        return unless /\.rs$/;
        my $rel = $File::Find::name;
        $rel =~ s{^\Q$src\E/}{};
        my $module;
        if ($rel eq 'lib.rs') { $module = 'crate' }
        elsif ($rel eq 'main.rs') { $module = 'main' }
        else {
            ($module = $rel) =~ s{\.rs$}{};
            $module =~ s{/mod$}{};
            $module =~ s{/}{::}g;
        }
        $file_of{$module} = $File::Find::name;
    },
    $src
);

sub parent { my ($m) = @_; return $m =~ /^(.*)::[^:]+$/ ? $1 : 'crate' }

# The longest known module a path (a::b::c) names.
sub resolve {
    my ($path) = @_;
    my @parts = split /::/, $path;
    while (@parts) {
        my $m = join '::', @parts;
        return $m if exists $file_of{$m};
        pop @parts;
    }
    return undef;
}

# `a::{b, c::{d, e}}` -> a::b, a::c::d, a::c::e
sub expand {
    my ($tree) = @_;
    $tree =~ s/\s+//g;
    return ($tree) unless $tree =~ /\{/;
    my ($head, $inner) = $tree =~ /^(.*?)\{(.*)\}$/ or return ($tree);
    my @items;
    my ($depth, $cur) = (0, '');
    for my $c (split //, $inner) {
        if ($c eq ',' && $depth == 0) { push @items, $cur; $cur = ''; next }
        $depth++ if $c eq '{';
        $depth-- if $c eq '}';
        $cur .= $c;
    }
    push @items, $cur if length $cur;
    return map { $_ eq 'self' ? substr($head, 0, -2) : expand($head . $_) } @items;
}

my %edges;    # from -> { to -> 1 }
for my $module (sort keys %file_of) {
    open my $fh, '<', $file_of{$module} or die "cannot read $file_of{$module}: $!";
    my $text = join '', grep { !m{^\s*//} } <$fh>;
    close $fh;
    my @paths;
    while ($text =~ /\buse\s+((?:crate|super)::[^;]+);/g) { push @paths, expand($1) }
    while ($text =~ /(?<![\$\w])crate::([a-z_][a-z0-9_]*(?:::[a-z_][a-z0-9_]*)*)/g) {
        push @paths, "crate::$1";
    }
    # `super` is the parent of the file's module (for `mod.rs` as for a leaf file).
    my $up = parent($module);
    for my $path (@paths) {
        my $target;
        if ($path =~ /^crate::(.*)$/) { $target = $1 }
        elsif ($path =~ /^super::(.*)$/) {
            my $rest = $1;
            $target = $rest eq '*' ? $up : $up eq 'crate' ? $rest : "${up}::$rest";
        }
        next unless defined $target;
        my $to = resolve($target);
        next if !defined $to || $to eq $module || $to eq 'crate';
        $edges{$module}{$to} = 1;
    }
}

my @problems;

# Layers.
sub area { my ($m) = @_; return (split /::/, $m)[0] }
for my $from (sort keys %edges) {
    next if $from eq 'crate';
    for my $to (sort keys %{ $edges{$from} }) {
        my ($a, $b) = (area($from), area($to));
        for my $x ($a, $b) {
            push @problems, "module area '$x' has no layer in scripts/check-layers.pl"
                unless exists $rank{$x};
        }
        next unless exists $rank{$a} && exists $rank{$b};
        push @problems, "upward import: $from -> $to ($a is below $b)" if $rank{$b} > $rank{$a};
    }
}

# Cycles (Tarjan), ignoring edges along the module tree.
sub related {
    my ($x, $y) = @_;
    return index("${x}::", "${y}::") == 0 || index("${y}::", "${x}::") == 0;
}
my (%index, %low, %on, @stack);
my $next = 0;
sub visit {
    my ($v) = @_;
    $index{$v} = $low{$v} = $next++;
    push @stack, $v;
    $on{$v} = 1;
    for my $w (sort keys %{ $edges{$v} // {} }) {
        next if related($v, $w);
        if (!exists $index{$w}) { visit($w); $low{$v} = $low{$w} if $low{$w} < $low{$v} }
        elsif ($on{$w}) { $low{$v} = $index{$w} if $index{$w} < $low{$v} }
    }
    if ($low{$v} == $index{$v}) {
        my @scc;
        while (1) { my $w = pop @stack; $on{$w} = 0; push @scc, $w; last if $w eq $v }
        push @problems, 'import cycle: ' . join(' <-> ', sort @scc) if @scc > 1;
    }
}
visit($_) for grep { !exists $index{$_} } sort keys %file_of;

if (@problems) {
    print STDERR "check-layers: $_\n" for @problems;
    exit 1;
}
my $count = 0;
$count += keys %{ $edges{$_} } for keys %edges;
print "check-layers: " . (keys %file_of) . " modules, $count imports: no cycle, no upward import\n";
