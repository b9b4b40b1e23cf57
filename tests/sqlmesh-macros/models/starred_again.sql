MODEL (name mart.starred_again, kind FULL);

SELECT @STAR(mart.starred, suffix := '_2')
FROM mart.starred
WHERE doubled > 20
