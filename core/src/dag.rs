//! The model DAG: topological order, ancestors, descendants, and cycles reported as paths.
//!
//! Nodes are indices into the project's model list; edges point from a parent to the models
//! that read it.

use std::collections::VecDeque;

/// A DAG over `n` nodes, built from each node's parents.
#[derive(Debug, Clone)]
pub struct Dag {
    parents: Vec<Vec<usize>>,
    children: Vec<Vec<usize>>,
    order: Vec<usize>,
}

impl Dag {
    /// Build the DAG, or return one cycle as a path of node indices (first node repeated last).
    pub fn new(parents: Vec<Vec<usize>>) -> Result<Dag, Vec<usize>> {
        let n = parents.len();
        let mut children = vec![vec![]; n];
        let mut indegree = vec![0usize; n];
        for (child, ps) in parents.iter().enumerate() {
            for &p in ps {
                children[p].push(child);
                indegree[child] += 1;
            }
        }
        // Kahn's algorithm; ties broken by index so the order is stable
        let mut ready: VecDeque<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
        let mut order = Vec::with_capacity(n);
        while let Some(i) = ready.pop_front() {
            order.push(i);
            for &c in &children[i] {
                indegree[c] -= 1;
                if indegree[c] == 0 {
                    ready.push_back(c);
                }
            }
        }
        if order.len() < n {
            return Err(find_cycle(&parents, &indegree));
        }
        Ok(Dag {
            parents,
            children,
            order,
        })
    }

    /// Every node, parents before children.
    pub fn topological_order(&self) -> &[usize] {
        &self.order
    }

    /// The direct parents of `i`: the nodes it reads.
    pub fn parents(&self, i: usize) -> &[usize] {
        &self.parents[i]
    }

    /// The direct children of `i`: the nodes that read it.
    pub fn children(&self, i: usize) -> &[usize] {
        &self.children[i]
    }

    /// All transitive parents of `i`, nearest first.
    pub fn ancestors(&self, i: usize) -> Vec<usize> {
        walk(i, &self.parents)
    }

    /// All transitive children of `i`, nearest first.
    pub fn descendants(&self, i: usize) -> Vec<usize> {
        walk(i, &self.children)
    }
}

fn walk(start: usize, edges: &[Vec<usize>]) -> Vec<usize> {
    let mut seen = vec![false; edges.len()];
    let mut out = vec![];
    let mut queue: VecDeque<usize> = edges[start].iter().copied().collect();
    while let Some(i) = queue.pop_front() {
        if !std::mem::replace(&mut seen[i], true) {
            out.push(i);
            queue.extend(edges[i].iter().copied());
        }
    }
    out
}

/// Follow parent edges among the nodes Kahn's algorithm could not order until a node repeats.
fn find_cycle(parents: &[Vec<usize>], indegree: &[usize]) -> Vec<usize> {
    let stuck: Vec<bool> = indegree.iter().map(|&d| d > 0).collect();
    let start = stuck
        .iter()
        .position(|&s| s)
        .expect("a cycle leaves a node unordered");
    let mut path = vec![start];
    let mut pos = vec![usize::MAX; parents.len()];
    pos[start] = 0;
    let mut cur = start;
    loop {
        let next = parents[cur]
            .iter()
            .copied()
            .filter(|&p| stuck[p])
            .min()
            .expect("stuck nodes have stuck parents");
        if pos[next] != usize::MAX {
            let mut cycle: Vec<usize> = path[pos[next]..].to_vec();
            cycle.reverse(); // parent -> child reading order
            cycle.push(cycle[0]);
            return cycle;
        }
        pos[next] = path.len();
        path.push(next);
        cur = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_parents_first_and_walks_both_ways() {
        // 0 -> 1 -> 2, 0 -> 2, 3 alone
        let d = Dag::new(vec![vec![], vec![0], vec![1, 0], vec![]]).unwrap();
        assert_eq!(d.topological_order(), &[0, 3, 1, 2]);
        assert_eq!(d.ancestors(2), vec![1, 0]);
        assert_eq!(d.descendants(0), vec![1, 2]);
    }

    #[test]
    fn cycle_is_reported_as_a_path() {
        // 0 -> 1 -> 2 -> 0, and 3 reads 2
        let err = Dag::new(vec![vec![2], vec![0], vec![1], vec![2]]).unwrap_err();
        assert_eq!(err.first(), err.last());
        assert_eq!(err.len(), 4);
        let mut members = err[..3].to_vec();
        members.sort();
        assert_eq!(members, vec![0, 1, 2]);
    }
}
