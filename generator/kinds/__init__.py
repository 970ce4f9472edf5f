"""Article kinds, one module each: a parameter schema (`SPEC`) and a `build` that makes a page context.

The older kinds still live in generator/articles.py and move here one by one;
`articles.KINDS` maps every kind name to its schema and builder.
"""
