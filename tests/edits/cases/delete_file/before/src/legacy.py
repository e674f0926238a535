import calc

OLD = calc.add
