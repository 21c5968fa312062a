42
line
xyabcdu
uvzd
