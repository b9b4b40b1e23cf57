-- no columns: typed as pandas types them, with its missing-value markers as NULL
MODEL (name raw.people, kind SEED (path '../seeds/people.csv'));
